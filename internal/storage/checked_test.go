package storage

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// TestCheckedNamesTheOperationOnce: every Store error of a local folder
// names its operation and object exactly once, and keeps its cause.
func TestCheckedNamesTheOperationOnce(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := digest.Digest{SHA256: strings.Repeat("0", 64), Size: 1}
	cases := []struct {
		prefix string
		err    error
	}{
		{"put a/b: ", l.Put(ctx, "a/b", strings.NewReader("xy"), good)},
		{"put a/../b: ", l.Put(ctx, "a/../b", strings.NewReader("x"), good)},
		{"copy missing to a/c: ", l.Copy(ctx, "missing", "a/c")},
		{"stat missing: ", func() error { _, err := l.Stat(ctx, "missing"); return err }()},
		{"open missing: ", func() error { _, err := l.Open(ctx, "missing"); return err }()},
		{"open missing: ", func() error { _, err := l.OpenReaderAt(ctx, "missing"); return err }()},
		{"read pointer missing: ", func() error { _, err := l.ReadPointer(ctx, "missing"); return err }()},
		{"swap pointer cur: ", l.SwapPointer(ctx, "cur", "", "")},
		{"list \"/x\": ", l.List(ctx, "/x", func(Info) error { return nil })},
		{"delete a//b: ", l.Delete(ctx, "a//b")},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%q: no error", c.prefix)
			continue
		}
		msg := c.err.Error()
		if !strings.HasPrefix(msg, c.prefix) || strings.Count(msg, strings.TrimSuffix(c.prefix, ": ")) != 1 {
			t.Errorf("error %q: want it to start with %q, once", msg, c.prefix)
		}
	}
	for _, err := range cases[2:7] {
		if !errors.Is(err.err, fs.ErrNotExist) {
			t.Errorf("%v: lost fs.ErrNotExist", err.err)
		}
	}
	// An error of List's callback comes back as it is.
	if err := l.Put(ctx, "x", strings.NewReader("x"), mustDigest("x")); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := l.List(ctx, "", func(Info) error { return stop }); err != stop {
		t.Errorf("List returned %v, want the callback's error itself", err)
	}
}

func mustDigest(s string) digest.Digest {
	d, _ := digest.Of(strings.NewReader(s))
	return d
}
