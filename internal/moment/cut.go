package moment

import (
	"errors"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/when"
)

// Cut is where a moment lands in the stream: every transaction up to and
// including one, and nothing after it. A cut is always a transaction
// boundary, also when the transaction touched several tables.
type Cut struct {
	// At is the moment asked for.
	At when.At `json:"at"`
	// Seq is the last event of the cut: every event with seq <= Seq is in
	// it. 0 when nothing captured is before the cut.
	Seq uint64 `json:"seq"`
	// Landed reports a transaction at Txn. A cut at a binlog position before
	// any captured transaction of its capture start has none: its Seq is the
	// start's and Txn.Position the position asked for.
	Landed bool       `json:"landed"`
	Txn    change.Txn `json:"txn"`
}

// Position is the cut's binlog position with the transaction's GTID and the
// cut's seq: a snapshot or export footer's position.
func (c Cut) Position() binlogpos.Position {
	p := c.Txn.Position
	p.Seq = c.Seq
	return p
}

// schemaPos is the binlog position schema changes are placed against: a
// binlog position asked for itself (a DDL between the cut's transaction
// and it is in), else the cut transaction's end (a DDL after the last row
// change before a time, seq or GTID is not: DDL statements have no events,
// so nothing tells when they committed).
func (c Cut) schemaPos() binlogpos.Position {
	if c.At.Kind == when.KindPos {
		return c.At.Pos.Coords()
	}
	return c.Txn.Position.Coords()
}

// String names the transaction the cut landed on: GTID, binlog position,
// commit time and seq.
func (c Cut) String() string {
	if !c.Landed {
		return fmt.Sprintf("binlog %s, before any captured transaction (seq %d)", c.Txn.Position, c.Seq)
	}
	g := c.Txn.Position.GTID
	if g == "" {
		g = "(none)"
	}
	return fmt.Sprintf("transaction GTID %s ending at binlog %s, committed %s, seq %d", g, c.Txn.Position,
		c.Txn.CommitTime.UTC().Format("2006-01-02 15:04:05.999999 MST"), c.Seq)
}

// Code classifies a refusal.
type Code string

// Refusal codes.
const (
	CodeNotCaptured     Code = "not captured yet"
	CodeNotCovered      Code = "not covered by the index"
	CodeGap             Code = "inside a capture gap"
	CodeNotFound        Code = "not found"
	CodeBeforeSnapshots Code = "before the oldest snapshot"
	CodeNoSnapshot      Code = "no snapshot"
	CodeUnknownTable    Code = "unknown table"
	CodeShape           Code = "shape changed"
	CodeNewTable        Code = "table not in the snapshot"
	CodeArchive         Code = "archived hour unreadable"
)

// RefusedError is a moment, or a table at it, that cannot be rebuilt, with
// the reason. Nothing is written for it.
type RefusedError struct {
	At     string // the moment as asked
	Code   Code
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("moment %s refused (%s): %s", e.At, e.Code, e.Reason)
}

// IsRefused reports whether err is a *RefusedError, and returns it.
func IsRefused(err error) (*RefusedError, bool) {
	var r *RefusedError
	ok := errors.As(err, &r)
	return r, ok
}

// Facts is what the index says about a source for resolving a moment.
type Facts struct {
	Source string
	// Captured is false when capture never committed a checkpoint.
	Captured   bool
	Checkpoint change.Checkpoint
	Starts     []change.Start
	Gaps       []change.Gap
}

// Bounds returns the seqs (floor, upto] in which the transaction of at is
// looked up, or refuses at: nothing captured, at after the checkpoint ("not
// captured yet"), a binlog position before capture started or inside a
// capture gap. It is a pure function of its arguments.
func Bounds(at when.At, f Facts) (floor, upto uint64, err error) {
	refuse := func(code Code, format string, args ...any) (uint64, uint64, error) {
		return 0, 0, &RefusedError{At: at.String(), Code: code, Reason: fmt.Sprintf(format, args...)}
	}
	if !f.Captured {
		return refuse(CodeNotCaptured, "capture of %s has no checkpoint: nothing is captured yet", f.Source)
	}
	cp := f.Checkpoint
	cpPos := cp.Pos().Coords()
	upto = cp.LastSeq
	switch at.Kind {
	case when.KindTime:
		if at.Time.After(cp.LastCommit) {
			return refuse(CodeNotCaptured, "capture's newest transaction committed %s (seq %d, binlog %s); a transaction committed after it and at or before %s may not be captured yet",
				fmtTime(cp.LastCommit), cp.LastSeq, cpPos, fmtTime(at.Time))
		}
	case when.KindSeq:
		if at.Seq > cp.LastSeq {
			return refuse(CodeNotCaptured, "capture's checkpoint is at seq %d", cp.LastSeq)
		}
	case when.KindPos:
		c, err := binlogpos.Compare(cpPos, at.Pos)
		if err != nil {
			return refuse(CodeNotCovered, "cannot order it against capture's checkpoint %s: %v", cpPos, err)
		}
		if c < 0 {
			return refuse(CodeNotCaptured, "capture's checkpoint is at binlog %s", cpPos)
		}
		base, serr := coveringStart(at.Pos, f.Starts, f.Gaps)
		if serr != nil {
			return 0, 0, &RefusedError{At: at.String(), Code: serr.code, Reason: serr.reason}
		}
		floor = base.Seq
	case when.KindGTID, when.KindLatest:
	default:
		return refuse(CodeNotFound, "unknown kind of moment %q", at.Kind)
	}
	return floor, upto, nil
}

// startErr is why coveringStart refuses.
type startErr struct {
	code   Code
	reason string
}

// coveringStart is the newest capture start at or before pos, unless a gap
// covers pos (positions.md, "Mapping a dump position to a seq").
func coveringStart(pos binlogpos.Position, starts []change.Start, gaps []change.Gap) (change.Start, *startErr) {
	var base *change.Start
	for i := range starts {
		c, err := binlogpos.Compare(starts[i].Position, pos)
		if err != nil {
			return change.Start{}, &startErr{CodeNotCovered, err.Error()}
		}
		if c <= 0 && (base == nil || starts[i].Seq >= base.Seq) {
			base = &starts[i]
		}
	}
	if base == nil {
		return change.Start{}, &startErr{CodeNotCovered, "capture started after it; the changes before capture started are not in the index"}
	}
	for _, g := range gaps {
		from, to := gapFrom(g), gapTo(g)
		c1, err1 := binlogpos.Compare(from, pos)
		c2, err2 := binlogpos.Compare(pos, to)
		if err := errors.Join(err1, err2); err != nil {
			return change.Start{}, &startErr{CodeGap, err.Error()}
		}
		if c1 < 0 && c2 < 0 {
			return change.Start{}, &startErr{CodeGap, fmt.Sprintf("capture gap #%d (binlog %s to %s: %s) covers it: the index lacks its changes", g.ID, from, to, g.Reason)}
		}
	}
	return *base, nil
}

func gapFrom(g change.Gap) binlogpos.Position {
	return g.From().Coords()
}
func gapTo(g change.Gap) binlogpos.Position { return g.To() }

// Decide makes the cut of at from the transaction its lookup found (found
// false: none in (floor, upto]), or refuses it. It is a pure function.
//
//   - a time: the last transaction committed at or before it. A time whose
//     cut is the last transaction before a capture gap is refused: the
//     transactions the gap lost may have committed before it. A time before
//     every captured transaction is refused.
//   - a seq or GTID: that transaction's end (exact, also next to a gap). A
//     GTID no captured event carries is refused ("not captured yet" when
//     it is past the checkpoint's GTID set).
//   - a binlog position: the last transaction ending at or before it, or
//     the covering capture start's seq when there is none.
//   - latest: the checkpoint's transaction.
//
// before asks for the cut just before at instead (the start of a range
// [at, …)): a time's last transaction committed strictly before it; a seq's
// or GTID's transaction before theirs; a position's last transaction ending
// before it. The lookup must have been made accordingly (see Lookup).
func Decide(at when.At, before bool, f Facts, floor uint64, txn change.Txn, found bool) (Cut, error) {
	refuse := func(code Code, format string, args ...any) (Cut, error) {
		return Cut{}, &RefusedError{At: at.String(), Code: code, Reason: fmt.Sprintf(format, args...)}
	}
	cut := Cut{At: at, Seq: txn.Position.Seq, Landed: found, Txn: txn}
	if !found {
		switch {
		case at.Kind == when.KindPos:
			cut.Seq, cut.Txn = floor, change.Txn{Position: at.Pos.Coords()}
			return cut, nil
		case at.Kind == when.KindTime:
			what := "at or before"
			if before {
				what = "before"
			}
			return refuse(CodeNotCovered, "no captured transaction committed %s %s: the index does not know the tables before its first transaction", what, fmtTime(at.Time))
		case at.Kind == when.KindGTID && !before:
			if past, ok := pastGTIDSet(at.GTID, f.Checkpoint.GTIDSet); ok && past {
				return refuse(CodeNotCaptured, "capture's GTID set %s does not hold it yet", f.Checkpoint.GTIDSet)
			}
			return refuse(CodeNotFound, "no captured row change carries GTID %s (a transaction without row changes, such as DDL, has no events in the index)", at.GTID)
		case before && (at.Kind == when.KindSeq || at.Kind == when.KindGTID):
			// The transaction of at is the first captured one.
			cut.Seq, cut.Txn = floor, change.Txn{}
			return cut, nil
		case at.Kind == when.KindSeq:
			return refuse(CodeNotFound, "no stored event has seq %d", at.Seq)
		}
		return refuse(CodeNotCaptured, "capture of %s has stored no transaction", f.Source)
	}
	if at.Kind == when.KindTime {
		for _, g := range f.Gaps {
			if s, ok := lastSeqBefore(g, f); ok && s == cut.Seq {
				return refuse(CodeGap, "its cut is the last transaction before capture gap #%d (binlog %s to %s: %s), committed %s: transactions the gap lost may have committed at or before it",
					g.ID, gapFrom(g), gapTo(g), g.Reason, fmtTime(txn.CommitTime))
			}
		}
	}
	return cut, nil
}

// lastSeqBefore is the seq of the last event captured before gap g: the
// seq of the capture start that resumed after it, or the checkpoint's when
// capture has not resumed (the checkpoint is then the gap's start).
func lastSeqBefore(g change.Gap, f Facts) (uint64, bool) {
	to := gapTo(g)
	for _, st := range f.Starts {
		if c, err := binlogpos.Compare(st.Position, to); err == nil && c == 0 {
			return st.Seq, true
		}
	}
	cp := f.Checkpoint.Pos().Coords()
	if c, err := binlogpos.Compare(cp, gapFrom(g)); err == nil && c <= 0 {
		return f.Checkpoint.LastSeq, true
	}
	return 0, false
}

// pastGTIDSet reports whether gtid's sequence number is beyond what set
// (MariaDB "d-s-n,…" or MySQL "uuid:1-5:7,…") holds for its domain; ok is
// false when it cannot tell.
func pastGTIDSet(gtid, set string) (past, ok bool) {
	dom, n, err := change.GTIDKey(gtid)
	if err != nil {
		return false, false
	}
	hi, known := gtidSetMax(set, dom)
	if !known {
		return true, true // the domain is not in the set at all
	}
	return n > hi, true
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.999999 MST") }
