package storagetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/dbtrail/dbtrail/internal/storage"
)

func testMultipart(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, _ := Content(6, LargeSize+12345)
	d := put(t, ctx, s, "big/table.parquet", b)
	checkStat(t, ctx, s, "big/table.parquet", d)
	r, err := s.Open(ctx, "big/table.parquet")
	if err != nil {
		t.Fatal(err)
	}
	hsh := sha256.New()
	n, err := io.Copy(hsh, r)
	r.Close()
	if err != nil || n != d.Size || hex.EncodeToString(hsh.Sum(nil)) != d.SHA256 {
		t.Fatalf("read back %d bytes (%v), digest differs or short", n, err)
	}
	ra, err := s.OpenReaderAt(ctx, "big/table.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	p := make([]byte, 1<<20)
	off := int64(len(b)) - int64(len(p)) - 7
	if _, err := ra.ReadAt(p, off); err != nil || !bytes.Equal(p, b[off:off+int64(len(p))]) {
		t.Fatalf("ReadAt near the end of the large object: %v", err)
	}
	if err := s.Put(ctx, "big/table.parquet", bytes.NewReader(b), d); err != nil {
		t.Fatalf("repeated large Put: %v", err)
	}
}

func testMultipartMismatch(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, d := Content(7, LargeSize)
	b[len(b)-1] ^= 1 // the last byte differs: noticed only at the end
	err := s.Put(ctx, "big/bad", bytes.NewReader(b), d)
	var de *storage.DigestError
	if !errors.As(err, &de) {
		t.Fatalf("large Put with a wrong digest: err = %v, want a *storage.DigestError", err)
	}
	_, err = s.Stat(ctx, "big/bad")
	wantNotExist(t, "Stat after a refused large Put", err)
	// A body that ends early is refused too.
	_, d = Content(8, LargeSize)
	err = s.Put(ctx, "big/short", bytes.NewReader(b[:LargeSize/2]), d)
	if !errors.As(err, &de) {
		t.Fatalf("large Put of a short body: err = %v, want a *storage.DigestError", err)
	}
	checkList(t, ctx, s, "big/")
}
