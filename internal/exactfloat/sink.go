package exactfloat

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Appender takes rows in the SQL text form, as snapshot.TableWriter does.
type Appender interface {
	AppendSQL(row []rowimage.Cell) error
}

// Sink passes dumped rows on to an Appender with their FLOAT values made
// exact from a fix file. It is not safe for concurrent use.
type Sink struct {
	t     *schema.Table
	plan  Plan
	fixes *Fixes
	next  Appender
	rows  int64
	fixed int64
	key   []byte
	bits  []uint32
	out   []rowimage.Cell
	texts [][]byte
}

// NewSink returns a Sink of t's rows into next, fixed from fixes (made for
// plan, NewPlan(t)).
func NewSink(t *schema.Table, plan Plan, fixes *Fixes, next Appender) *Sink {
	return &Sink{t: t, plan: plan, fixes: fixes, next: next,
		out: make([]rowimage.Cell, len(t.Columns)), texts: make([][]byte, len(plan.Floats))}
}

// Fixed returns how many rows had a value replaced.
func (s *Sink) Fixed() int64 { return s.fixed }

// AppendSQL looks the row's key up in the fix file and passes the row on
// with each fixed FLOAT value replaced by its exact one. A fixed value must
// round to the dumped one (Rounds): when it does not, or the dump holds
// NULL, the row is refused with a *snapshot.RowError naming the key.
func (s *Sink) AppendSQL(row []rowimage.Cell) error {
	s.rows++
	if len(row) != len(s.t.Columns) {
		return s.next.AppendSQL(row) // the writer reports it
	}
	var err error
	if s.key, err = s.plan.AppendKey(s.key[:0], s.t, row); err != nil {
		return s.next.AppendSQL(row) // the writer reports the bad key value
	}
	var ok bool
	if s.bits, ok, err = s.fixes.Find(s.bits, s.key); err != nil {
		return err
	}
	if !ok {
		return s.next.AppendSQL(row)
	}
	copy(s.out, row)
	for n, j := range s.plan.Floats {
		if Keep(s.bits[n]) {
			continue
		}
		x := math.Float32frombits(s.bits[n])
		if row[j].Null || !Rounds(row[j].Text, x) {
			return s.refuse(j, row[j], x)
		}
		s.texts[n] = AppendExact(s.texts[n][:0], x)
		s.out[j] = rowimage.TextCell(s.texts[n])
	}
	s.fixed++
	return s.next.AppendSQL(s.out)
}

// refuse reports a dumped value its exact value does not round to.
func (s *Sink) refuse(col int, dumped rowimage.Cell, x float32) error {
	v := "NULL"
	if !dumped.Null {
		v = strconv.Quote(string(dumped.Text))
	}
	return &snapshot.RowError{Table: s.t.QualifiedName(), Column: s.t.Columns[col].Name, Row: s.rows, Value: v,
		Err: fmt.Errorf("key %s: the exact FLOAT value read from the source, %s, does not round to the dumped value; the exact values do not belong to this dump", s.key, AppendExact(nil, x))}
}
