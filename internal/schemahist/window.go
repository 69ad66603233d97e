package schemahist

import (
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
)

// Window is the stretch of the stream (From, To]: after a snapshot's or a
// cut's position, up to and including another's. FromSeq and ToSeq are
// their seqs; From and To their binlog positions (To.File "" when the end
// has no position: the seq alone decides there).
type Window struct {
	FromSeq, ToSeq uint64
	From, To       binlogpos.Position
}

// Holds reports whether schema version v applies inside w: strictly after
// its start and at or before its end. Between the end seqs the seq
// decides; at an end seq the binlog position does, and a position that
// cannot be ordered counts as inside (the safe side: a change is seen).
func (w Window) Holds(v change.SchemaVersion) bool {
	if v.Seq < w.FromSeq || v.Seq > w.ToSeq {
		return false
	}
	p := v.Pos().Coords()
	if v.Seq == w.FromSeq {
		if c, err := binlogpos.Compare(p, w.From); err == nil && c <= 0 {
			return false
		}
	}
	if v.Seq == w.ToSeq && w.To.File != "" {
		if c, err := binlogpos.Compare(p, w.To); err == nil && c > 0 {
			return false
		}
	}
	return true
}

// AtOrBefore reports whether schema version v applies at a cut at seq cut,
// binlog position pos: it comes before the cut's seq, or at it and not
// after its position. A version at the cut's seq whose position cannot be
// ordered, or a cut without a position (pos.File ""), counts as applying.
func AtOrBefore(v change.SchemaVersion, cut uint64, pos binlogpos.Position) bool {
	if v.Seq != cut {
		return v.Seq < cut
	}
	if pos.File == "" {
		return true
	}
	c, err := binlogpos.Compare(v.Pos().Coords(), pos)
	return err != nil || c <= 0
}
