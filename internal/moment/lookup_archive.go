package moment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
)

// archivedLookup is the index's transaction lookups extended over archived
// hours (Past.Lookup). Each lookup asks the index first; the archived
// hours are searched only where they can hold a later answer than the
// index's (an hour whose seqs reach past it), or hold the seq or GTID the
// index lacks. Their keys grow with seq as the index's do (binlog
// position, commit time), so a search reads a few row groups: a binary
// search over the hours by their first event, then over the chosen hours'
// row groups by theirs, then the row groups that can hold the answer.
type archivedLookup struct {
	Store
	hours ArchiveFiles
}

var _ Index = archivedLookup{}

// HourError is an archived hour a lookup needed and could not read (store
// down, file missing, a digest or footer check failed). Resolve refuses
// the moment with it: a moment is never answered without an hour it needs.
type HourError struct {
	Hour ArchiveHour
	Err  error
}

func (e *HourError) Error() string {
	return fmt.Sprintf("archived hour %s (%s) cannot be read: %v", hourName(e.Hour.Hour), e.Hour.Name, e.Err)
}

func (e *HourError) Unwrap() error { return e.Err }

// TxnAtPos is index.Store.TxnAtPos over the index and the archived hours.
func (l archivedLookup) TxnAtPos(ctx context.Context, source string, pos binlogpos.Position, floor, upto uint64) (change.Txn, bool, error) {
	txn, ok, err := l.Store.TxnAtPos(ctx, source, pos, floor, upto)
	if err != nil {
		return txn, ok, err
	}
	return l.orArchived(ctx, source, floor, upto, txn, ok, nil, func(e *change.Event) (bool, error) {
		c, err := binlogpos.Compare(e.Pos().Coords(), pos)
		return c <= 0, err
	})
}

// TxnAtTime is index.Store.TxnAtTime over the index and the archived hours.
func (l archivedLookup) TxnAtTime(ctx context.Context, source string, t time.Time, floor, upto uint64) (change.Txn, bool, error) {
	txn, ok, err := l.Store.TxnAtTime(ctx, source, t, floor, upto)
	if err != nil {
		return txn, ok, err
	}
	// An hour's events all committed in it: an hour after t holds none.
	late := func(h ArchiveHour) bool { return change.HourTime(h.Hour).After(t) }
	return l.orArchived(ctx, source, floor, upto, txn, ok, late, func(e *change.Event) (bool, error) {
		return !e.CommitTime.After(t), nil
	})
}

// TxnOfSeq is index.Store.TxnOfSeq over the index and the archived hours.
func (l archivedLookup) TxnOfSeq(ctx context.Context, source string, seq, floor, upto uint64) (change.Txn, bool, error) {
	txn, ok, err := l.Store.TxnOfSeq(ctx, source, seq, floor, upto)
	if err != nil || ok || seq <= floor || seq > upto {
		return txn, ok, err
	}
	return l.archivedTxn(ctx, source, floor, upto, func(s *hourSearch, hours []ArchiveHour) (change.Event, bool, error) {
		return s.eventAt(hours, seq)
	})
}

// TxnOfGTID is index.Store.TxnOfGTID over the index and the archived hours.
func (l archivedLookup) TxnOfGTID(ctx context.Context, source, gtid string, floor, upto uint64) (change.Txn, bool, error) {
	txn, ok, err := l.Store.TxnOfGTID(ctx, source, gtid, floor, upto)
	if err != nil || ok {
		return txn, ok, err
	}
	return l.archivedTxn(ctx, source, floor, upto, func(s *hourSearch, hours []ArchiveHour) (change.Event, bool, error) {
		return s.gtidEvent(hours, gtid, floor, upto)
	})
}

// FirstSeqOf is index.Store.FirstSeqOf with the transaction before txn
// looked up over the archived hours too.
func (l archivedLookup) FirstSeqOf(ctx context.Context, source string, txn change.Txn, floor uint64) (uint64, error) {
	return change.FirstSeqVia(ctx, l.TxnAtPos, source, txn, floor)
}

// orArchived returns the later of the index's answer (txn, found) and the
// archived hours' last event in (floor, upto] for which le holds (le holds
// for a prefix of the stream in seq order). Only hours reaching past the
// index's answer, and not ruled out by skip (nil: none is), are read.
func (l archivedLookup) orArchived(ctx context.Context, source string, floor, upto uint64, txn change.Txn, found bool,
	skip func(ArchiveHour) bool, le func(*change.Event) (bool, error)) (change.Txn, bool, error) {
	hours, err := l.hours.Hours(ctx, source, floor, upto)
	if err != nil {
		return change.Txn{}, false, fmt.Errorf("archived hours of %s: %w", source, err)
	}
	hours = slices.DeleteFunc(hours, func(h ArchiveHour) bool {
		return (found && h.LastSeq <= txn.Position.Seq) || (skip != nil && skip(h))
	})
	if len(hours) == 0 {
		return txn, found, nil
	}
	s := newHourSearch(ctx, l.hours)
	defer s.close()
	ev, ok, err := s.lastWhere(hours, floor, upto, le)
	if err != nil {
		return change.Txn{}, false, err
	}
	if ok && (!found || ev.Seq > txn.Position.Seq) {
		return txnOfEvent(&ev), true, nil
	}
	return txn, found, nil
}

// archivedTxn finds an event with find among the archived hours of
// (floor, upto] and returns its transaction (named by its last event: the
// last transaction ending at or before the event's end).
func (l archivedLookup) archivedTxn(ctx context.Context, source string, floor, upto uint64,
	find func(*hourSearch, []ArchiveHour) (change.Event, bool, error)) (change.Txn, bool, error) {
	hours, err := l.hours.Hours(ctx, source, floor, upto)
	if err != nil || len(hours) == 0 {
		return change.Txn{}, false, err
	}
	s := newHourSearch(ctx, l.hours)
	ev, ok, err := find(s, hours)
	s.close()
	if err != nil || !ok {
		return change.Txn{}, false, err
	}
	return l.TxnAtPos(ctx, source, ev.Pos().Coords(), floor, upto)
}

func txnOfEvent(e *change.Event) change.Txn {
	return change.Txn{Position: e.Pos(), CommitTime: e.CommitTime}
}

// errFound stops a row group scan early.
var errFound = errors.New("found")
