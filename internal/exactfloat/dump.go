package exactfloat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Dir is the folder of fix files inside a dump folder (the dump's table
// listing skips folders).
const Dir = ".exactfloats"

// FixFile is the fix file of the i-th table of a dump, relative to the
// dump folder.
func FixFile(i int) string { return filepath.Join(Dir, strconv.Itoa(i)+".floats") }

// ErrBadFixFile: a fix file named for a table is outside the dump folder,
// or the table's definition cannot have one.
var ErrBadFixFile = errors.New("bad fix file")

// Table is one dumped table whose FLOAT values are to be fixed.
type Table struct {
	Index int // position among the dump's tables (FixFile)
	Def   *schema.Table
	Plan  Plan
}

// Select returns the tables of defs (the dump's, in order) with FLOAT
// columns to fix, and the reasons why those with FLOAT columns that cannot
// be fixed keep their dumped values. An error is a definition NewPlan
// refuses otherwise.
func Select(defs []*schema.Table) (tables []Table, asDumped []string, err error) {
	for i, def := range defs {
		plan, err := NewPlan(def)
		var uf *UnfixableError
		switch {
		case errors.As(err, &uf):
			asDumped = append(asDumped, uf.Error())
		case err != nil:
			return nil, nil, err
		case len(plan.Floats) > 0:
			tables = append(tables, Table{Index: i, Def: def, Plan: plan})
		}
	}
	return tables, asDumped, nil
}

// FixResult says what Fix read and wrote.
type FixResult struct {
	Rows        int64 // read from the source
	ChangedKeys int   // keys the window changed
	Fixes       int64 // records of the fix file
}

// Fix writes t's fix file at path: the exact values read (read: ReadSource
// on a consistent snapshot at the window's end), where for each key the
// window changed its first change's before image counts instead (see
// Changes). window scans the table's index events from the dump to that
// snapshot, in seq order. The sorted runs go to a folder made in scratch
// and removed. A window event of another shape is an *UnfixableError.
func Fix(t Table, window func(fn func(change.Event) error) error, read func(*Writer) (int64, error), scratch, path string) (FixResult, error) {
	runs, err := os.MkdirTemp(scratch, "runs")
	if err != nil {
		return FixResult{}, err
	}
	defer os.RemoveAll(runs)
	w := NewWriter(runs, len(t.Plan.Floats))
	changes := NewChanges(t.Def, t.Plan, w)
	if err := window(changes.Add); err != nil {
		return FixResult{}, err
	}
	rows, err := read(w)
	if err != nil {
		return FixResult{}, err
	}
	n, err := w.Finish(path)
	if err != nil {
		return FixResult{}, fmt.Errorf("table %s: %w", t.Def.QualifiedName(), err)
	}
	return FixResult{Rows: rows, ChangedKeys: changes.Keys(), Fixes: n}, nil
}

// OpenSink opens the fix file rel of dumpDir for def and returns a Sink
// putting its values into the rows before next; done closes the file. A
// rel outside dumpDir, or a def that cannot have fixes, is ErrBadFixFile.
func OpenSink(dumpDir, rel string, def *schema.Table, next Appender) (s *Sink, done func(), err error) {
	if !filepath.IsLocal(rel) {
		return nil, nil, fmt.Errorf("%w: %q is not inside the dump folder", ErrBadFixFile, rel)
	}
	plan, err := NewPlan(def)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadFixFile, err)
	}
	fixes, err := Open(filepath.Join(dumpDir, rel), len(plan.Floats))
	if err != nil {
		return nil, nil, err
	}
	return NewSink(def, plan, fixes, next), func() { fixes.Close() }, nil
}
