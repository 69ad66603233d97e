package moment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/when"
)

// Index is what resolving a moment reads of the index; *index.Store has it.
type Index interface {
	LoadCheckpoint(ctx context.Context, source string) (change.Checkpoint, bool, error)
	Starts(ctx context.Context, source string) ([]change.Start, error)
	Gaps(ctx context.Context, source string) ([]change.Gap, error)
	TxnAtTime(ctx context.Context, source string, t time.Time, floor, upto uint64) (change.Txn, bool, error)
	TxnAtPos(ctx context.Context, source string, pos binlogpos.Position, floor, upto uint64) (change.Txn, bool, error)
	TxnOfSeq(ctx context.Context, source string, seq, floor, upto uint64) (change.Txn, bool, error)
	TxnOfGTID(ctx context.Context, source, gtid string, floor, upto uint64) (change.Txn, bool, error)
	FirstSeqOf(ctx context.Context, source string, txn change.Txn, floor uint64) (uint64, error)
}

// Store is everything the moment package reads of the index: the
// lookups of Index, a table's events in a window, a key's changes, the
// change counts of a window and the archived hours' records.
// *index.Store has it (checked in the package's tests), so this package
// imports no database.
type Store interface {
	Index
	History
	WindowEvents(ctx context.Context, source, schemaName, table string, afterSeq, uptoSeq uint64, fn func(change.Event) error) error
	KeyChanges(ctx context.Context, source, schemaName, table, pk string) ([]change.Event, error)
	ChangeCounts(ctx context.Context, source string, afterSeq, uptoSeq uint64) (map[[2]string]int64, error)
	CountHour(ctx context.Context, source string, hour uint32) (int64, error)
	Archives(ctx context.Context, source string) ([]change.Archive, error)
}

// ReadFacts reads the checkpoint, capture starts and gaps of source.
func ReadFacts(ctx context.Context, ix Index, source string) (Facts, error) {
	f := Facts{Source: source}
	var err error
	if f.Checkpoint, f.Captured, err = ix.LoadCheckpoint(ctx, source); err != nil {
		return Facts{}, err
	}
	if f.Starts, err = ix.Starts(ctx, source); err != nil {
		return Facts{}, err
	}
	if f.Gaps, err = ix.Gaps(ctx, source); err != nil {
		return Facts{}, err
	}
	return f, nil
}

// Resolve makes the cut of at (or, with before, the cut just before it; see
// Decide) from f and the index. A moment that cannot be cut is a
// *RefusedError; any other error is the index's.
func Resolve(ctx context.Context, ix Index, f Facts, at when.At, before bool) (Cut, error) {
	floor, upto, err := Bounds(at, f)
	if err != nil {
		return Cut{}, err
	}
	txn, found, err := lookup(ctx, ix, f, at, before, floor, upto)
	if _, ok := IsRefused(err); ok {
		return Cut{}, err
	}
	var he *HourError
	if errors.As(err, &he) {
		return Cut{}, &RefusedError{At: at.String(), Code: CodeArchive, Reason: he.Error() +
			"; the moment's transaction may be in it, so it is not answered without it"}
	}
	if err != nil {
		return Cut{}, fmt.Errorf("resolve moment %s: %w", at, err)
	}
	return Decide(at, before, f, floor, txn, found)
}

// lookup finds the transaction Decide cuts at in (floor, upto].
func lookup(ctx context.Context, ix Index, f Facts, at when.At, before bool, floor, upto uint64) (change.Txn, bool, error) {
	src := f.Source
	// prior is the transaction before txn, for a cut before it.
	prior := func(txn change.Txn, found bool, err error) (change.Txn, bool, error) {
		if err != nil || !before {
			return txn, found, err
		}
		if !found { // the seq or GTID itself is unknown: refused as for a cut at it
			_, err := Decide(at, false, f, floor, txn, false)
			return change.Txn{}, false, err
		}
		first, err := ix.FirstSeqOf(ctx, src, txn, floor)
		if err != nil || first <= floor+1 {
			return change.Txn{}, false, err
		}
		return ix.TxnOfSeq(ctx, src, first-1, floor, upto)
	}
	switch at.Kind {
	case when.KindTime:
		t := at.Time
		if before {
			t = t.Add(-time.Nanosecond)
		}
		return ix.TxnAtTime(ctx, src, t, floor, upto)
	case when.KindPos:
		p := at.Pos.Coords()
		if before {
			if p.Pos == 0 {
				return change.Txn{}, false, nil
			}
			p.Pos--
		}
		return ix.TxnAtPos(ctx, src, p, floor, upto)
	case when.KindSeq:
		return prior(ix.TxnOfSeq(ctx, src, at.Seq, floor, upto))
	case when.KindGTID:
		return prior(ix.TxnOfGTID(ctx, src, at.GTID, floor, upto))
	case when.KindLatest:
		if f.Checkpoint.LastSeq == 0 {
			return change.Txn{}, false, nil
		}
		return ix.TxnOfSeq(ctx, src, f.Checkpoint.LastSeq, floor, upto)
	}
	return change.Txn{}, false, fmt.Errorf("unknown kind of moment %q", at.Kind)
}
