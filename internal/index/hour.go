package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/change"
)

// HourTable is one table's share of one hour of a source's events.
type HourTable struct {
	Schema, Table string
	// Events is how many events of the table were committed in the hour;
	// FirstSeq and LastSeq are the smallest and greatest of their seqs.
	Events            int64
	FirstSeq, LastSeq uint64
}

// HourTables lists the tables of source with events committed in hour (an
// HourID), ordered by schema then table name, byte-wise (the order of an
// archive file), with their event counts and seq ranges. It reads chunk
// headers only: a chunk holds one hour, so all its events count.
func (s *Store) HourTables(ctx context.Context, source string, hour uint32) ([]HourTable, error) {
	fail := func(err error) ([]HourTable, error) {
		return nil, fmt.Errorf("hour tables %s %s: %w", source, PartitionName(hour), err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT schema_name, table_name, SUM(n), MIN(first_seq), MAX(last_seq)
		FROM event_chunks WHERE source = ? AND hour_id = ? GROUP BY schema_name, table_name`, source, hour)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	var out []HourTable
	for rows.Next() {
		var t HourTable
		if err := rows.Scan(&t.Schema, &t.Table, &t.Events, &t.FirstSeq, &t.LastSeq); err != nil {
			return fail(err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	// Sorted here, not by the server: its collation need not be byte order.
	slices.SortFunc(out, func(a, b HourTable) int {
		if c := strings.Compare(a.Schema, b.Schema); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	return out, nil
}

// HourEvents calls fn with every event of source committed in hour (an
// HourID) in (schema, table, seq) order, names compared byte-wise: the
// order of an archive file. It lists the hour's tables (HourTables), then
// reads each table's chunks of the hour in seq order over the by_table index
// (HourTableEvents): one short statement per table, nothing sorted, memory
// bounded by one chunk. Events a running capture adds to the hour meanwhile
// may be missed: read an hour once capture's checkpoint is past it. An error
// from fn stops the scan and is returned as is.
func (s *Store) HourEvents(ctx context.Context, source string, hour uint32, fn func(change.Event) error) error {
	tables, err := s.HourTables(ctx, source, hour)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if err := s.HourTableEvents(ctx, source, hour, t.Schema, t.Table, fn); err != nil {
			return err
		}
	}
	return nil
}

// HourTableEvents calls fn with every event of one table of source committed
// in hour (an HourID), in seq order, streamed over the by_table index
// without a sort. An error from fn stops the scan and is returned as is.
func (s *Store) HourTableEvents(ctx context.Context, source string, hour uint32, schemaName, table string, fn func(change.Event) error) error {
	err := s.scanChunks(ctx, func(e *change.Event) error {
		if err := fn(*e); err != nil {
			return callbackError{err}
		}
		return nil
	}, `SELECT `+chunkHeadCols+` FROM event_chunks FORCE INDEX (by_table)
		WHERE source = ? AND schema_name = ? AND table_name = ? AND hour_id = ?
		ORDER BY first_seq`, source, schemaName, table, hour)
	var fnErr callbackError
	if errors.As(err, &fnErr) {
		return fnErr.err
	}
	if err != nil {
		return fmt.Errorf("hour events %s %s.%s %s: %w", source, schemaName, table, PartitionName(hour), err)
	}
	return nil
}
