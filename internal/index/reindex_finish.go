package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

// ReindexFinish is what FinishReindex writes.
type ReindexFinish struct {
	// Checkpoint is where capture resumes: after the last restored
	// transaction.
	Checkpoint change.Checkpoint
	// Schemas, Gaps and Starts are the history rows that apply at or before
	// the checkpoint, in their order; Gaps also those the restore found.
	Schemas []change.SchemaVersion
	Gaps    []change.Gap
	Starts  []change.Start
	// The restore's report: hours and events restored, their seq range,
	// the archives that could not be read, and where capture resumes.
	Hours             int
	Events            int64
	FirstSeq, LastSeq uint64
	Failed            []string
	Outcome           string
}

// FinishReindex ends source's unfinished restore: schema history, gaps,
// starts, the checkpoint and the restore's report commit in one index
// transaction, which commits only while fence (source's capture lease, nil
// in tests) is held. A restore already finished is left as it is (done
// false).
func (s *Store) FinishReindex(ctx context.Context, source string, fence *Lease, f ReindexFinish) (done bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("finish restore of %s: %w", source, err) }
	tx, err := s.Begin(ctx, source, fence)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var finished sql.NullTime
	err = tx.tx.QueryRowContext(ctx, `SELECT finished_at FROM restores WHERE source = ? FOR UPDATE`, source).Scan(&finished)
	if errors.Is(err, sql.ErrNoRows) {
		return fail(errors.New("no restore of the source was begun"))
	}
	if err != nil {
		return fail(err)
	}
	if finished.Valid {
		return false, nil
	}
	for _, v := range f.Schemas {
		if err := tx.PutSchemaVersion(ctx, v); err != nil {
			return fail(err)
		}
	}
	for _, g := range f.Gaps {
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO capture_gaps
			(source, from_file, from_pos, from_gtid, to_file, to_pos, reason, detected_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			source, g.FromFile, g.FromPos, nullString(g.FromGTID), g.ToFile, g.ToPos, g.Reason, g.DetectedAt.UTC()); err != nil {
			return fail(fmt.Errorf("gap %s:%d..%s:%d: %w", g.FromFile, g.FromPos, g.ToFile, g.ToPos, err))
		}
	}
	for _, st := range f.Starts {
		if err := tx.RecordStart(ctx, st); err != nil {
			return fail(err)
		}
	}
	if err := tx.SaveCheckpoint(ctx, f.Checkpoint); err != nil {
		return fail(err)
	}
	if _, err := tx.tx.ExecContext(ctx, `UPDATE restores SET finished_at = ?, hours = ?, events = ?, first_seq = ?, last_seq = ?,
		failed = ?, outcome = ? WHERE source = ?`, time.Now().UTC(), f.Hours, f.Events, f.FirstSeq, f.LastSeq,
		nullString(strings.Join(f.Failed, "\n")), nullString(f.Outcome), source); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return true, nil
}

// SeqRun is a run of consecutive seqs the index holds, First..Last.
type SeqRun struct{ First, Last uint64 }

// SeqRuns returns the runs of consecutive seqs the stored events of source
// cover, in seq order: one run when they have no hole. It reads chunk
// headers in primary key order and merges their ranges; a merged range
// whose chunks hold fewer events than it spans (chunks of different tables
// interleave, so a hole can hide under another chunk's range) is unpacked
// to find its holes.
func (s *Store) SeqRuns(ctx context.Context, source string) ([]SeqRun, error) {
	fail := func(err error) ([]SeqRun, error) { return nil, fmt.Errorf("seq runs of %s: %w", source, err) }
	rows, err := s.db.QueryContext(ctx, `SELECT first_seq, last_seq, n FROM event_chunks WHERE source = ? ORDER BY first_seq`, source)
	if err != nil {
		return fail(err)
	}
	var merged []SeqRun
	var counts []uint64
	for rows.Next() {
		var r SeqRun
		var n uint64
		if err := rows.Scan(&r.First, &r.Last, &n); err != nil {
			rows.Close()
			return fail(err)
		}
		if k := len(merged); k > 0 && r.First <= merged[k-1].Last+1 {
			merged[k-1].Last = max(merged[k-1].Last, r.Last)
			counts[k-1] += n
			continue
		}
		merged, counts = append(merged, r), append(counts, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	var out []SeqRun
	for i, r := range merged {
		if counts[i] == r.Last-r.First+1 {
			out = append(out, r)
			continue
		}
		err := s.scanSeqs(ctx, source, r.First, r.Last, func(e *change.Event) error {
			if k := len(out); k > 0 && out[k-1].Last+1 == e.Seq {
				out[k-1].Last = e.Seq
			} else {
				out = append(out, SeqRun{e.Seq, e.Seq})
			}
			return nil
		})
		if err != nil {
			return fail(err)
		}
	}
	return out, nil
}

// EventAt returns the stored event of source with seq; found is false when
// the index does not hold it.
func (s *Store) EventAt(ctx context.Context, source string, seq uint64) (e change.Event, found bool, err error) {
	err = s.scanSeqs(ctx, source, seq, seq, func(ev *change.Event) error {
		e, found = *ev, true
		e.PK, e.PKBefore = strings.Clone(e.PK), strings.Clone(e.PKBefore)
		e.Before, e.After = cloneBytes(e.Before), cloneBytes(e.After)
		return nil
	})
	if err != nil {
		return change.Event{}, false, fmt.Errorf("event %d of %s: %w", seq, source, err)
	}
	return e, found, nil
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
