package moment

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
)

// ErrUnknownTable and ErrUnknownSchema are SelectChanges' errors when the
// selection names a table, or a schema no table of which, that was not
// defined up to the range's end.
var (
	ErrUnknownTable  = errors.New("unknown table")
	ErrUnknownSchema = errors.New("unknown schema")
)

// ChangesTable is one table of a changes export.
type ChangesTable struct {
	Key TableKey
	// Named: the selection names the table, so it is written even
	// without a change in the range.
	Named   bool
	Changes int64 // its changes in the range (counts)
}

// SelectChanges picks the tables of a changes export of a range ending at
// seq upto: those sel selects (every non-system table when sel is empty)
// with a change in counts, and every table sel names by schema.table, in
// name order. hist is the source's schema history; a named table not
// defined at or before upto is ErrUnknownTable, a named schema without such
// a table ErrUnknownSchema.
func SelectChanges(hist []change.SchemaVersion, upto uint64, sel Selection, counts map[TableKey]int64) ([]ChangesTable, error) {
	known := map[TableKey]bool{}
	knownSchema := map[string]bool{}
	for _, v := range hist {
		if v.Definition != nil && schemahist.AtOrBefore(v, upto, binlogpos.Position{}) && !schema.IsSystemSchema(v.Schema) {
			known[TableKey{Schema: v.Schema, Table: v.Table}] = true
			knownSchema[v.Schema] = true
		}
	}
	named := map[TableKey]bool{}
	for _, n := range sel.Tables {
		s, t, ok := strings.Cut(n, ".")
		k := TableKey{Schema: s, Table: t}
		if !ok || !known[k] {
			return nil, fmt.Errorf("changes export: %w %q (name it as schema.table; it must exist before --until)", ErrUnknownTable, n)
		}
		named[k] = true
	}
	for _, s := range sel.Schemas {
		if !knownSchema[s] {
			return nil, fmt.Errorf("changes export: %w %q (no table of it before --until)", ErrUnknownSchema, s)
		}
	}
	pick := func(k TableKey) bool {
		if len(sel.Schemas) == 0 && len(sel.Tables) == 0 {
			return !schema.IsSystemSchema(k.Schema)
		}
		return named[k] || slices.Contains(sel.Schemas, k.Schema)
	}
	var out []ChangesTable
	for k, n := range counts {
		if n > 0 && pick(k) {
			out = append(out, ChangesTable{Key: k, Named: named[k], Changes: n})
		}
	}
	for k := range named {
		if !slices.ContainsFunc(out, func(c ChangesTable) bool { return c.Key == k }) {
			out = append(out, ChangesTable{Key: k, Named: true, Changes: max(counts[k], 0)})
		}
	}
	slices.SortFunc(out, func(a, b ChangesTable) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	return out, nil
}
