package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/change"
)

// chunkHeadCols are the columns scanChunks reads, in chunkHead order, then
// the payload.
const chunkHeadCols = `source, first_seq, commit_ts, binlog_file, end_pos, gtid, schema_name, table_name, schema_version, column_names, events`

// scanChunks runs q (selecting chunkHeadCols) and calls fn with every event
// of every chunk it returns, in row order. An error from fn is returned as is.
func (s *Store) scanChunks(ctx context.Context, fn func(*change.Event) error, q string, args ...any) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var payload []byte
	for rows.Next() {
		var h chunkHead
		var gtid sql.NullString
		if err := rows.Scan(&h.Source, &h.FirstSeq, &h.CommitTime, &h.BinlogFile, &h.EndPos, &gtid,
			&h.Schema, &h.Table, &h.Version, &h.Columns, &payload); err != nil {
			return err
		}
		h.GTID = gtid.String
		if err := unpackChunk(&h, payload, fn); err != nil {
			return err
		}
	}
	return rows.Err()
}

// chunkSpan is where a stored chunk lies: its first and last seq, and its
// header's end position (0 while a streamed transaction's end is unknown).
type chunkSpan struct{ first, last, endPos uint64 }

// chunkAt returns the chunk of source with the greatest first_seq <= seq,
// among the chunks of one table when table is not empty; ok is false when
// there is none. q is the Store's pool, or a Tx to see its own inserts.
func chunkAt(ctx context.Context, q rowQueryer, source, schemaName, table string, seq uint64) (c chunkSpan, ok bool, err error) {
	query := `SELECT first_seq, last_seq, end_pos FROM event_chunks WHERE source = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1`
	args := []any{source, seq}
	if table != "" {
		query = `SELECT first_seq, last_seq, end_pos FROM event_chunks FORCE INDEX (by_table)
			WHERE source = ? AND schema_name = ? AND table_name = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1`
		args = []any{source, schemaName, table, seq}
	}
	err = q.QueryRowContext(ctx, query, args...).Scan(&c.first, &c.last, &c.endPos)
	if errors.Is(err, sql.ErrNoRows) {
		return chunkSpan{}, false, nil
	}
	return c, err == nil, err
}

// WindowEvents calls fn with every change of one table of source with
// afterSeq < seq <= uptoSeq in stream (seq) order, streamed over the
// by_table index without a sort: a refresh window. Chunks of one table never
// overlap, so the window is the chunk that may hold afterSeq+1 and those
// starting after it. An error from fn stops the scan and is returned as is.
func (s *Store) WindowEvents(ctx context.Context, source, schemaName, table string, afterSeq, uptoSeq uint64, fn func(change.Event) error) error {
	err := s.windowEvents(ctx, source, schemaName, table, afterSeq, uptoSeq, func(e *change.Event) error { return fn(*e) })
	var fnErr callbackError
	if errors.As(err, &fnErr) {
		return fnErr.err
	}
	if err != nil {
		return fmt.Errorf("window events %s.%s (%d, %d]: %w", schemaName, table, afterSeq, uptoSeq, err)
	}
	return nil
}

// callbackError carries a callback's error through the scan unwrapped.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

func (s *Store) windowEvents(ctx context.Context, source, schemaName, table string, afterSeq, uptoSeq uint64, fn func(*change.Event) error) error {
	if uptoSeq <= afterSeq {
		return nil
	}
	from := afterSeq + 1
	c, ok, err := chunkAt(ctx, s.db, source, schemaName, table, afterSeq)
	if err != nil {
		return err
	}
	if ok && c.last > afterSeq {
		from = c.first
	}
	return s.scanChunks(ctx, func(e *change.Event) error {
		if e.Seq <= afterSeq || e.Seq > uptoSeq {
			return nil
		}
		if err := fn(e); err != nil {
			return callbackError{err}
		}
		return nil
	}, `SELECT `+chunkHeadCols+` FROM event_chunks FORCE INDEX (by_table)
		WHERE source = ? AND schema_name = ? AND table_name = ? AND first_seq >= ? AND first_seq <= ?
		ORDER BY first_seq`, source, schemaName, table, from, uptoSeq)
}

// ChangeCounts returns how many events each table of source has with
// afterSeq < seq <= uptoSeq; a table with none is absent. Chunks wholly in
// the window count by their header; those that straddle an end are
// unpacked.
func (s *Store) ChangeCounts(ctx context.Context, source string, afterSeq, uptoSeq uint64) (map[[2]string]int64, error) {
	out := map[[2]string]int64{}
	if uptoSeq <= afterSeq {
		return out, nil
	}
	fail := func(err error) (map[[2]string]int64, error) {
		return nil, fmt.Errorf("change counts %s (%d, %d]: %w", source, afterSeq, uptoSeq, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT schema_name, table_name, SUM(n) FROM event_chunks
		WHERE source = ? AND first_seq > ? AND first_seq <= ? AND last_seq <= ? GROUP BY schema_name, table_name`,
		source, afterSeq, uptoSeq, uptoSeq)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k [2]string
		var n int64
		if err := rows.Scan(&k[0], &k[1], &n); err != nil {
			return fail(err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	// Straddlers: the chunks holding seqs on both sides of afterSeq or of
	// uptoSeq; the header count above left them out.
	var edges []uint64
	seen := map[uint64]bool{}
	for _, at := range []uint64{afterSeq, uptoSeq} {
		cs, err := chunksAcross(ctx, s.db, source, at)
		if err != nil {
			return fail(err)
		}
		for _, c := range cs {
			if !seen[c.first] {
				seen[c.first] = true
				edges = append(edges, c.first)
			}
		}
	}
	for _, first := range edges {
		err := s.scanChunks(ctx, func(e *change.Event) error {
			if e.Seq > afterSeq && e.Seq <= uptoSeq {
				out[[2]string{e.Schema, e.Table}]++
			}
			return nil
		}, `SELECT `+chunkHeadCols+` FROM event_chunks WHERE source = ? AND first_seq = ?`, source, first)
		if err != nil {
			return fail(err)
		}
	}
	return out, nil
}

// CountEvents returns the exact number of events stored for source.
func (s *Store) CountEvents(ctx context.Context, source string) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(SUM(n), 0) FROM event_chunks WHERE source = ?", source).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events %s: %w", source, err)
	}
	return n, nil
}
