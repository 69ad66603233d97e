package api

import "context"

// DefaultMaxQueries is how many DuckDB sessions answer queries at once by
// default: each holds up to its memory limit.
const DefaultMaxQueries = 2

// QuerySlots bounds the queries DuckDB answers at once. One is shared by
// every reader of a process that answers SQL: the API's queries and, in
// `dbtrail dev`, the time-travel SQL port's statements.
type QuerySlots struct{ c chan struct{} }

// NewQuerySlots allows n queries at once (DefaultMaxQueries when n < 1).
func NewQuerySlots(n int) *QuerySlots {
	if n < 1 {
		n = DefaultMaxQueries
	}
	return &QuerySlots{c: make(chan struct{}, n)}
}

// Acquire waits for a slot until ctx ends (then its error).
func (s *QuerySlots) Acquire(ctx context.Context) error {
	select {
	case s.c <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release frees a slot Acquire took.
func (s *QuerySlots) Release() { <-s.c }

// DefaultQueryMaxBytes is the largest answer, its rows encoded, one query
// holds by default (serve's --query-max-bytes, the SQL port's bound).
const DefaultQueryMaxBytes = 16 << 20
