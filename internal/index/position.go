package index

import (
	"context"
	"errors"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
)

// RecordStart writes a start in the same transaction as the checkpoint it
// goes with. Writing the same start again is a no-op.
func (t *Tx) RecordStart(ctx context.Context, st change.Start) error {
	_, err := t.tx.ExecContext(ctx, `INSERT IGNORE INTO capture_starts (source, seq, binlog_file, binlog_pos, reason, started_at)
		VALUES (?, ?, ?, ?, ?, ?)`, t.source, st.Seq, st.Position.File, st.Position.Pos, st.Reason, st.StartedAt.UTC())
	if err != nil {
		return fmt.Errorf("record capture start %s at %s: %w", t.source, st.Position, err)
	}
	return nil
}

// Starts lists the starts of source, oldest first.
func (s *Store) Starts(ctx context.Context, source string) ([]change.Start, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, binlog_file, binlog_pos, reason, started_at
		FROM capture_starts WHERE source = ? ORDER BY seq, started_at`, source)
	if err != nil {
		return nil, fmt.Errorf("capture starts of %s: %w", source, err)
	}
	defer rows.Close()
	var out []change.Start
	for rows.Next() {
		st := change.Start{Source: source}
		if err := rows.Scan(&st.Seq, &st.Position.File, &st.Position.Pos, &st.Reason, &st.StartedAt); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// ErrNotCaughtUp: capture has not yet committed the position asked for.
var ErrNotCaughtUp = errors.New("capture has not reached the position yet")

// NotCoveredError: the index cannot bridge to a position because capture
// started after it or a capture gap covers it.
type NotCoveredError struct {
	Position binlogpos.Position
	Reason   string
}

func (e *NotCoveredError) Error() string {
	return fmt.Sprintf("the index does not cover binlog position %s: %s", e.Position, e.Reason)
}

// SeqAt maps a binlog position (for example a dump's) to the seq of the last
// captured transaction at or before it. It returns ErrNotCaughtUp while the
// checkpoint is before pos, and a *NotCoveredError when capture started after
// pos or a gap covers it. Positions are compared by file sequence and
// offset, never by text or time.
func (s *Store) SeqAt(ctx context.Context, source string, pos binlogpos.Position) (uint64, error) {
	cp, ok, err := s.LoadCheckpoint(ctx, source)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrNotCaughtUp
	}
	if c, err := binlogpos.Compare(cp.Pos().Coords(), pos); err != nil {
		return 0, err
	} else if c < 0 {
		return 0, ErrNotCaughtUp
	}
	starts, err := s.Starts(ctx, source)
	if err != nil {
		return 0, err
	}
	gaps, err := s.Gaps(ctx, source)
	if err != nil {
		return 0, err
	}
	base, err := coveringStart(pos, starts, gaps)
	if err != nil {
		return 0, err
	}
	return s.lastSeqAtOrBefore(ctx, source, pos, base.Seq, cp.LastSeq)
}

// coveringStart returns the newest start at or before pos, unless a gap
// covers pos.
func coveringStart(pos binlogpos.Position, starts []change.Start, gaps []change.Gap) (change.Start, error) {
	var base *change.Start
	for i := range starts {
		c, err := binlogpos.Compare(starts[i].Position, pos)
		if err != nil {
			return change.Start{}, err
		}
		if c <= 0 && (base == nil || starts[i].Seq >= base.Seq) {
			base = &starts[i]
		}
	}
	if base == nil {
		return change.Start{}, &NotCoveredError{Position: pos, Reason: "capture started after it; the changes before capture started are not in the index"}
	}
	for _, g := range gaps {
		from := g.From().Coords()
		to := g.To()
		c1, err1 := binlogpos.Compare(from, pos)
		c2, err2 := binlogpos.Compare(pos, to)
		if err := errors.Join(err1, err2); err != nil {
			return change.Start{}, err
		}
		if c1 < 0 && c2 < 0 {
			return change.Start{}, &NotCoveredError{Position: pos, Reason: "a capture gap covers it: " + g.Reason}
		}
	}
	return *base, nil
}

// lastSeqAtOrBefore returns the seq of the last event in (floor, upTo]
// whose transaction ends at or before pos (positions grow with seq), or
// floor when there is none.
func (s *Store) lastSeqAtOrBefore(ctx context.Context, source string, pos binlogpos.Position, floor, upTo uint64) (uint64, error) {
	t, ok, err := s.TxnAtPos(ctx, source, pos, floor, upTo)
	if err != nil {
		return 0, fmt.Errorf("map position %s to seq: %w", pos, err)
	}
	if !ok {
		return floor, nil
	}
	return t.Position.Seq, nil
}
