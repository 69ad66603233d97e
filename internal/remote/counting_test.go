package remote

import (
	"context"
	"io"
	"strings"
	"sync"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// countingStore records the calls made to a real store, as "op name".
type countingStore struct {
	storage.Store
	mu  sync.Mutex
	log []string
}

func (s *countingStore) note(op, name string) {
	s.mu.Lock()
	s.log = append(s.log, op+" "+name)
	s.mu.Unlock()
}

// calls lists the operations made on name, in order, space-separated.
func (s *countingStore) calls(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ops []string
	for _, l := range s.log {
		if op, n, _ := strings.Cut(l, " "); n == name {
			ops = append(ops, op)
		}
	}
	return strings.Join(ops, " ")
}

// count is how many calls of op were made.
func (s *countingStore) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.log {
		if strings.HasPrefix(l, op+" ") {
			n++
		}
	}
	return n
}

func (s *countingStore) Put(ctx context.Context, name string, body io.Reader, d digest.Digest) error {
	s.note("put", name)
	return s.Store.Put(ctx, name, body, d)
}

func (s *countingStore) Copy(ctx context.Context, src, dst string) error {
	s.note("copy", dst)
	return s.Store.Copy(ctx, src, dst)
}

func (s *countingStore) Touch(ctx context.Context, name string) error {
	s.note("touch", name)
	return s.Store.Touch(ctx, name)
}

func (s *countingStore) Stat(ctx context.Context, name string) (storage.Info, error) {
	s.note("stat", name)
	return s.Store.Stat(ctx, name)
}

func (s *countingStore) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	s.note("open", name)
	return s.Store.Open(ctx, name)
}
