package storage_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/storage/storagetest"
)

func TestLocalConformance(t *testing.T) {
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T) storage.Store {
			s, err := storage.NewLocal(filepath.Join(t.TempDir(), "backups"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
