package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// content returns n bytes derived from fill, and their digest.
func content(n int, fill byte) ([]byte, digest.Digest) {
	b := bytes.Repeat([]byte{fill}, n)
	for i := range b {
		b[i] ^= byte(i * 7)
	}
	sum := sha256.Sum256(b)
	return b, digest.Digest{SHA256: hex.EncodeToString(sum[:]), Size: int64(n)}
}

func newLocal(t *testing.T) *Local {
	t.Helper()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLocalCopyIsHardLink checks that Copy shares the file instead of
// writing it again.
func TestLocalCopyIsHardLink(t *testing.T) {
	l, ctx := newLocal(t), context.Background()
	b, d := content(4096, 1)
	if err := l.Put(ctx, "snapshots/1/t.parquet", bytes.NewReader(b), d); err != nil {
		t.Fatal(err)
	}
	if err := l.Copy(ctx, "snapshots/1/t.parquet", "snapshots/2/t.parquet"); err != nil {
		t.Fatal(err)
	}
	a, err1 := os.Stat(filepath.Join(l.Root(), "snapshots/1/t.parquet"))
	c, err2 := os.Stat(filepath.Join(l.Root(), "snapshots/2/t.parquet"))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(a, c) {
		t.Fatal("Copy wrote a new file instead of a hard link")
	}
}

// TestLocalTouch checks that Touch moves an old file's modification time
// forward and keeps the hard links of Copy one file.
func TestLocalTouch(t *testing.T) {
	l, ctx := newLocal(t), context.Background()
	b, d := content(4096, 2)
	if err := l.Put(ctx, "objects/ab/x", bytes.NewReader(b), d); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	p := filepath.Join(l.Root(), "objects/ab/x")
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if err := l.Touch(ctx, "objects/ab/x"); err != nil {
		t.Fatal(err)
	}
	info, err := l.Stat(ctx, "objects/ab/x")
	if err != nil {
		t.Fatal(err)
	}
	if !info.ModTime.After(old) {
		t.Fatalf("Touch left ModTime at %v", info.ModTime)
	}
}

// TestLocalPointerIsSymlink checks that a local pointer is the symbolic link
// the snapshot layout already uses (current -> snapshots/<id>), and that a
// link made by other code reads as a pointer.
func TestLocalPointerIsSymlink(t *testing.T) {
	l, ctx := newLocal(t), context.Background()
	if err := os.MkdirAll(filepath.Join(l.Root(), "main"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(l.Root(), "main/current")
	if err := os.Symlink("snapshots/20261129T061500Z", link); err != nil {
		t.Fatal(err)
	}
	if err := l.SwapPointer(ctx, "main/current", "snapshots/20261129T061500Z", "snapshots/20261129T062000Z"); err != nil {
		t.Fatal(err)
	}
	target, err := os.Readlink(link)
	if err != nil || target != "snapshots/20261129T062000Z" {
		t.Fatalf("current -> %q (%v), want snapshots/20261129T062000Z", target, err)
	}
	ents, err := os.ReadDir(filepath.Join(l.Root(), "main"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "current" && e.Name() != ".current.lock" {
			t.Errorf("left in the folder: %s", e.Name())
		}
	}
}

// TestLocalListSkipsLeftovers checks that temporary and lock files (a
// crashed write's leftovers) and folders are never listed, and that a
// refused Put leaves no temporary file.
func TestLocalListSkipsLeftovers(t *testing.T) {
	l, ctx := newLocal(t), context.Background()
	b, d := content(10, 2)
	if err := l.Put(ctx, "a/x", bytes.NewReader(b), d); err != nil {
		t.Fatal(err)
	}
	bad := d
	bad.Size++
	if err := l.Put(ctx, "a/y", bytes.NewReader(b), bad); err == nil {
		t.Fatal("Put with a wrong size succeeded")
	}
	for _, f := range []string{"a/.x.123.tmp", "a/.publish.lock"} {
		if err := os.WriteFile(filepath.Join(l.Root(), f), []byte("left"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(l.Root(), "a/empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := l.List(ctx, "", func(i Info) error { names = append(names, i.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "a/x" {
		t.Fatalf("List = %q, want only a/x", names)
	}
	ents, err := os.ReadDir(filepath.Join(l.Root(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 4 { // x, empty, and the two planted leftovers
		for _, e := range ents {
			t.Log(e.Name())
		}
		t.Fatalf("%d entries in a/, want 4: a refused Put left a file", len(ents))
	}
}
