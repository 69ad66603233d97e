package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
)

// The model of TestSchemaChangeModel: the source's tables as the test's
// schema changes left them, enough for the DML connections to write valid
// rows and for the test to know which tables a refresh must re-dump.

// colKind is what values a model column takes.
type colKind int

const (
	kindInt     colKind = iota // a nullable integer (INT or BIGINT)
	kindIntNN                  // INT NOT NULL DEFAULT 5
	kindStr                    // VARCHAR(width) NULL, widened by MODIFY
	kindStrNN                  // VARCHAR(10) NOT NULL DEFAULT ''
	kindCodeStr                // VARCHAR(width) NULL of digits: MODIFY to INT re-dumps
	kindCodeInt                // INT NULL: MODIFY back to VARCHAR re-dumps
	kindDec                    // DECIMAL(8,2)
	kindDate                   // DATETIME
	kindEnum                   // ENUM('a','b') NOT NULL
	kindFixed                  // a column the DML leaves alone (BIT, DEFAULT CURRENT_TIMESTAMP)
)

type mcol struct {
	name  string
	kind  colKind
	width int // kindStr, kindCodeStr
}

// mtable is one live table. next is the largest id handed out (the DML
// connections add to it under the model's read lock).
type mtable struct {
	name  string
	cols  []mcol
	nBig  bool // n widened to BIGINT
	index []string
	next  *atomic.Int64
}

// value is a random value for a column of kind k (nil is NULL).
func (c mcol) value(r *rand.Rand) any {
	nullable := c.kind == kindInt || c.kind == kindStr || c.kind == kindCodeStr || c.kind == kindCodeInt || c.kind == kindDec || c.kind == kindDate
	if nullable && r.IntN(6) == 0 {
		return nil
	}
	switch c.kind {
	case kindInt, kindIntNN, kindCodeInt:
		return r.IntN(1_000_000)
	case kindStr, kindStrNN:
		return "s" + strconv.Itoa(r.IntN(1_000_000))
	case kindCodeStr:
		return strconv.Itoa(r.IntN(1_000_000))
	case kindDec:
		return fmt.Sprintf("%d.%02d", r.IntN(100000), r.IntN(100))
	case kindDate:
		return fmt.Sprintf("2021-%02d-%02d 07:08:%02d", 1+r.IntN(12), 1+r.IntN(28), r.IntN(60))
	case kindEnum:
		return []string{"a", "b"}[r.IntN(2)]
	}
	return nil
}

// writable are the columns the DML may set besides id.
func (t *mtable) writable() []mcol {
	var out []mcol
	for _, c := range t.cols {
		if c.name != "id" && c.kind != kindFixed {
			out = append(out, c)
		}
	}
	return out
}

// extra are the columns a schema change may drop, rename or retype: every
// column but id and n.
func (t *mtable) extra(kinds ...colKind) []int {
	var out []int
	for i, c := range t.cols {
		if c.name != "id" && c.name != "n" && (len(kinds) == 0 || slices.Contains(kinds, c.kind)) {
			out = append(out, i)
		}
	}
	return out
}

func (t *mtable) clone(name string) *mtable {
	c := &mtable{name: name, cols: slices.Clone(t.cols), nBig: t.nBig, index: slices.Clone(t.index), next: &atomic.Int64{}}
	return c
}

// ddlModel is the live tables and, for the current refresh window, the
// tables a schema change left unproven (by their names now: a rename
// carries the mark, a drop removes it, a new table under the name starts
// clean), the tables the refresh must re-dump.
type ddlModel struct {
	tables  []*mtable
	redump  map[string]bool
	counter int // names new tables, columns and indexes
}

func (m *ddlModel) find(name string) int {
	return slices.IndexFunc(m.tables, func(t *mtable) bool { return t.name == name })
}

func (m *ddlModel) fresh(prefix string) string {
	m.counter++
	return fmt.Sprintf("%s%d", prefix, m.counter)
}

// baseTable is a new table of the model's first shape.
func baseTable(name string) *mtable {
	return &mtable{name: name, next: &atomic.Int64{}, cols: []mcol{
		{name: "id", kind: kindIntNN}, {name: "v", kind: kindStr, width: 20}, {name: "n", kind: kindInt}, {name: "code", kind: kindCodeStr, width: 12}}}
}

const baseTableDDL = "CREATE TABLE `%s` (id INT PRIMARY KEY, v VARCHAR(20), n INT, code VARCHAR(12))"
