// Package exactfloat makes the FLOAT columns of a dumped table exact.
//
// mydumper writes a FLOAT as the server prints it, with 6 significant
// digits, which does not always name the stored float32: 3.1415927 is
// dumped as 3.14159, and converting the dump keeps 3.14159. The exact values
// come from elsewhere: the source read in a consistent snapshot after the
// dump (FLOAT selected as CAST(f AS DOUBLE), which prints the float32
// exactly), and for the rows changed between the dump and that snapshot the
// before image of their first change in the index. They are kept in a fix
// file (Writer, Fixes): per row key, the exact float32 of each FLOAT column
// whose 6-digit text does not give it back. While the dump is converted,
// Sink puts each such value in place of the dumped one, after checking that
// it rounds to the dumped text: values that do not belong to the dump fail
// the table, they never change a row silently.
//
// A table qualifies (NewPlan) when it has a FLOAT column and a primary or
// unique key without one: keys are what match a dumped row with its exact
// values.
package exactfloat

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Plan is the shape of one table's fixes: which columns are FLOAT and which
// name a row.
type Plan struct {
	Floats []int // FLOAT column positions, in table order
	Key    []int // key column positions, in key order
}

// UnfixableError reports a table with FLOAT columns whose values cannot be
// matched with its dumped rows.
type UnfixableError struct {
	Table  string // schema.table
	Reason string
}

func (e *UnfixableError) Error() string {
	return fmt.Sprintf("table %s: FLOAT values stay as dumped (6 significant digits): %s", e.Table, e.Reason)
}

// NewPlan returns the plan of t. A table without FLOAT columns gets an empty
// plan (no Floats); one whose FLOAT values cannot be matched by key (no
// primary or unique key, or a FLOAT column in its key) an *UnfixableError.
func NewPlan(t *schema.Table) (Plan, error) {
	var p Plan
	for i, c := range t.Columns {
		if c.Type == "float" {
			p.Floats = append(p.Floats, i)
		}
	}
	if len(p.Floats) == 0 {
		return Plan{}, nil
	}
	if t.KeyKind != schema.KeyPrimary && t.KeyKind != schema.KeyUnique {
		return Plan{}, &UnfixableError{Table: t.QualifiedName(), Reason: "it has no primary key and no unique key on NOT NULL columns"}
	}
	key, err := t.KeyIndexes()
	if err != nil {
		return Plan{}, err
	}
	for _, j := range key {
		if t.Columns[j].Type == "float" {
			return Plan{}, &UnfixableError{Table: t.QualifiedName(), Reason: fmt.Sprintf("its key holds the FLOAT column %s", t.Columns[j].Name)}
		}
	}
	p.Key = key
	return p, nil
}

// AppendKey appends the key of a row in the SQL text form (one value per
// column in table order) as rowimage.Key writes it: "[v1,v2]" of
// the canonical key values, the form of the index's keys.
func (p Plan) AppendKey(dst []byte, t *schema.Table, row []rowimage.Cell) ([]byte, error) {
	dst = append(dst, '[')
	for n, j := range p.Key {
		if n > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = rowimage.AppendSQLValue(dst, &t.Columns[j], row[j]); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// dumpDigits is how many significant digits the server prints a FLOAT with.
const dumpDigits = 6

// NeedsFix reports whether the dumped text of x (x printed with 6
// significant digits) reads back as another float32.
func NeedsFix(x float32) bool {
	d, err := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', dumpDigits, 64), 64)
	return err != nil || float32(d) != x
}

// Rounds reports whether dumped, a FLOAT as a dump wrote it, is x as the
// server prints it: the same float32, or x rounded to 6 significant digits
// (either neighbour on a tie, however the server breaks it).
func Rounds(dumped []byte, x float32) bool {
	d, err := strconv.ParseFloat(string(dumped), 64)
	if err != nil {
		return false
	}
	if float32(d) == x {
		return true
	}
	e := float64(x)
	if math.Signbit(d) != math.Signbit(e) {
		return false
	}
	m := math.Max(math.Abs(d), math.Abs(e))
	half := 0.5 * math.Pow(10, math.Floor(math.Log10(m))-(dumpDigits-1))
	return math.Abs(d-e) <= half*(1+1e-9)
}

// ParseExact reads an exact FLOAT value: the server's text of CAST(f AS
// DOUBLE) (a double that is a float32) or an image's number (a float32's
// shortest text); the float32 nearest either is the value itself.
func ParseExact(b []byte) (float32, error) {
	f, err := strconv.ParseFloat(string(b), 32)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("FLOAT value %q is not a float32", b)
	}
	return float32(f), nil
}

// AppendExact appends x as the text of CAST(f AS DOUBLE): the double that
// holds x exactly, which the snapshot writer reads back as x.
func AppendExact(dst []byte, x float32) []byte {
	return strconv.AppendFloat(dst, float64(x), 'g', -1, 64)
}
