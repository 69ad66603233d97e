package index

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/dbtrail/dbtrail/internal/change"
)

// Chunks of different tables interleave in seq (see chunk.go), so reading
// every table's events in seq order means reading the chunks that overlap a
// seq range and merging them. A chunk spans fewer than chunkMaxSpan seqs, so
// the chunks that may hold a seq s start in (s - chunkMaxSpan, s]: every
// query here is a bounded range scan of the primary key.

// spanFloor is the smallest first_seq of a chunk that may hold seq.
func spanFloor(seq uint64) uint64 {
	if seq < chunkMaxSpan {
		return 0
	}
	return seq - chunkMaxSpan + 1
}

// scanSeqs calls fn with every stored event of source with lo <= seq <= hi,
// in seq order, a window of chunkMaxSpan seqs at a time (the window's events
// are held, sorted, then handed out). The event passed to fn is valid only
// during the call. An error from fn stops the scan and is returned as is.
func (s *Store) scanSeqs(ctx context.Context, source string, lo, hi uint64, fn func(*change.Event) error) error {
	for a := lo; a <= hi; {
		b := hi
		if hi-a >= chunkMaxSpan {
			b = a + chunkMaxSpan - 1
		}
		var evs []change.Event
		err := s.scanChunks(ctx, func(e *change.Event) error {
			if e.Seq >= a && e.Seq <= b {
				evs = append(evs, *e)
			}
			return nil
		}, `SELECT `+chunkHeadCols+` FROM event_chunks WHERE source = ? AND first_seq >= ? AND first_seq <= ? AND last_seq >= ?`,
			source, spanFloor(a), b, a)
		if err != nil {
			return err
		}
		slices.SortFunc(evs, func(x, y change.Event) int { return cmp.Compare(x.Seq, y.Seq) })
		for i := range evs {
			if err := fn(&evs[i]); err != nil {
				return err
			}
		}
		if b == hi {
			break
		}
		a = b + 1
	}
	return nil
}

// chunksAcross returns the chunks of source that hold seqs on both sides of
// the boundary after at: first_seq <= at < last_seq. q is the Store's pool,
// or a Tx to see its own inserts.
func chunksAcross(ctx context.Context, q rowsQueryer, source string, at uint64) ([]chunkSpan, error) {
	rows, err := q.QueryContext(ctx, `SELECT first_seq, last_seq, end_pos FROM event_chunks
		WHERE source = ? AND first_seq >= ? AND first_seq <= ? AND last_seq > ?`, source, spanFloor(at), at, at)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []chunkSpan
	for rows.Next() {
		var c chunkSpan
		if err := rows.Scan(&c.first, &c.last, &c.endPos); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// maxStoredSeq returns the greatest seq stored for source, 0 when none.
func maxStoredSeq(ctx context.Context, q rowQueryer, source string) (uint64, error) {
	last, ok, err := chunkAt(ctx, q, source, "", "", ^uint64(0))
	if err != nil || !ok {
		return 0, err
	}
	var m uint64
	err = q.QueryRowContext(ctx, `SELECT MAX(last_seq) FROM event_chunks WHERE source = ? AND first_seq >= ?`,
		source, spanFloor(last.first)).Scan(&m)
	if err != nil {
		return 0, fmt.Errorf("greatest stored seq: %w", err)
	}
	return m, nil
}

// rowsQueryer is *sql.DB or *sql.Tx.
type rowsQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}
