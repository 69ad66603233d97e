package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
)

// The schema changes of TestSchemaChangeModel: each kind picks its table
// and columns at random, returns its statements and moves the model.

// foldKinds are the kinds the fold proves (schema-changes.md); redumpKinds
// those only the source knows: a refresh re-dumps the table alone.
var (
	foldKinds = []string{"index", "comment", "default", "addcol", "dropcol", "renamecol", "widen",
		"create", "like", "select", "drop", "rename", "swap", "truncate"}
	redumpKinds = []string{"retype", "nowdefault"}
)

// addTypes are the columns "addcol" adds: NULL and constant defaults of
// several types.
var addTypes = []mcol{
	{name: "VARCHAR(10) NULL", kind: kindStr, width: 10},
	{name: "VARCHAR(10) NOT NULL DEFAULT ''", kind: kindStrNN},
	{name: "INT NOT NULL DEFAULT 5", kind: kindIntNN},
	{name: "DECIMAL(8,2) DEFAULT 1.5", kind: kindDec},
	{name: "DATETIME DEFAULT '2020-01-02 03:04:05'", kind: kindDate},
	{name: "ENUM('a','b') NOT NULL DEFAULT 'b'", kind: kindEnum},
	{name: "BIT(5) DEFAULT b'101'", kind: kindFixed},
}

// ddl applies one schema change of kind to the model and returns its
// statements (more than one when the kind needs a table or column made
// first).
func (m *ddlModel) ddl(r *rand.Rand, kind string) []string {
	pick := func() *mtable { return m.tables[r.IntN(len(m.tables))] }
	q := func(s string, args ...any) string { return fmt.Sprintf(s, args...) }
	switch kind {
	case "index":
		t := pick()
		if len(t.index) > 0 && r.IntN(2) == 0 {
			ix := t.index[0]
			t.index = t.index[1:]
			return []string{q("DROP INDEX `%s` ON `%s`", ix, t.name)}
		}
		ix := m.fresh("ix")
		t.index = append(t.index, ix)
		return []string{q("CREATE INDEX `%s` ON `%s` (n)", ix, t.name)}
	case "comment":
		return []string{q("ALTER TABLE `%s` COMMENT = '%s'", pick().name, m.fresh("note "))}
	case "default":
		m.counter++
		return []string{q("ALTER TABLE `%s` ALTER COLUMN n SET DEFAULT %d", pick().name, m.counter)}
	case "addcol":
		t, a := pick(), addTypes[r.IntN(len(addTypes))]
		c, typ := mcol{name: m.fresh("c"), kind: a.kind, width: a.width}, a.name
		switch r.IntN(3) {
		case 0:
			t.cols = append(t.cols, c)
			return []string{q("ALTER TABLE `%s` ADD COLUMN `%s` %s", t.name, c.name, typ)}
		case 1:
			t.cols = slices.Insert(t.cols, 0, c)
			return []string{q("ALTER TABLE `%s` ADD COLUMN `%s` %s FIRST", t.name, c.name, typ)}
		default:
			i := r.IntN(len(t.cols))
			after := t.cols[i].name
			t.cols = slices.Insert(t.cols, i+1, c)
			return []string{q("ALTER TABLE `%s` ADD COLUMN `%s` %s AFTER `%s`", t.name, c.name, typ, after)}
		}
	case "dropcol", "renamecol":
		t := pick()
		ex := t.extra()
		if len(ex) == 0 {
			return append(m.ddl(r, "addcol"), m.ddl(r, kind)...)
		}
		i := ex[r.IntN(len(ex))]
		old := t.cols[i].name
		if kind == "dropcol" {
			t.cols = slices.Delete(t.cols, i, i+1)
			return []string{q("ALTER TABLE `%s` DROP COLUMN `%s`", t.name, old)}
		}
		t.cols[i].name = m.fresh(old + "_r")
		return []string{q("ALTER TABLE `%s` RENAME COLUMN `%s` TO `%s`", t.name, old, t.cols[i].name)}
	case "widen":
		t := pick()
		ex := t.extra(kindStr, kindCodeStr)
		if !t.nBig && (len(ex) == 0 || r.IntN(2) == 0) {
			t.nBig = true
			return []string{q("ALTER TABLE `%s` MODIFY n BIGINT", t.name)}
		}
		if len(ex) == 0 {
			return append(m.ddl(r, "addcol"), m.ddl(r, "comment")...)
		}
		c := &t.cols[ex[r.IntN(len(ex))]]
		c.width += 10
		return []string{q("ALTER TABLE `%s` MODIFY `%s` VARCHAR(%d)", t.name, c.name, c.width)}
	case "create":
		t := baseTable(m.fresh("t"))
		m.tables = append(m.tables, t)
		return []string{q(baseTableDDL, t.name)}
	case "like":
		src := pick()
		t := src.clone(m.fresh("t"))
		m.tables = append(m.tables, t)
		return []string{q("CREATE TABLE `%s` LIKE `%s`", t.name, src.name)}
	case "select":
		src := pick()
		t := &mtable{name: m.fresh("t"), nBig: src.nBig, next: &atomic.Int64{}, cols: []mcol{{name: "id", kind: kindIntNN}, {name: "n", kind: kindInt}}}
		t.next.Store(src.next.Load())
		m.tables = append(m.tables, t)
		return []string{q("CREATE TABLE `%s` (PRIMARY KEY (id)) SELECT id, n FROM `%s`", t.name, src.name)}
	case "drop":
		if len(m.tables) <= 4 {
			return append(m.ddl(r, "create"), m.ddl(r, kind)...)
		}
		i := r.IntN(len(m.tables))
		name := m.tables[i].name
		m.tables = slices.Delete(m.tables, i, i+1)
		delete(m.redump, name)
		return []string{q("DROP TABLE `%s`", name)}
	case "rename":
		t := pick()
		old := t.name
		m.rename(old, m.fresh("r"))
		if r.IntN(2) == 0 {
			return []string{q("ALTER TABLE `%s` RENAME TO `%s`", old, t.name)}
		}
		return []string{q("RENAME TABLE `%s` TO `%s`", old, t.name)}
	case "swap":
		i := r.IntN(len(m.tables))
		j := (i + 1 + r.IntN(len(m.tables)-1)) % len(m.tables)
		a, b, tmp := m.tables[i].name, m.tables[j].name, m.fresh("tmp")
		m.rename(a, tmp)
		m.rename(b, a)
		m.rename(tmp, b)
		return []string{q("RENAME TABLE `%s` TO `%s`, `%s` TO `%s`, `%s` TO `%s`", a, tmp, b, a, tmp, b)}
	case "truncate":
		return []string{q("TRUNCATE TABLE `%s`", pick().name)}
	case "retype":
		var cands []*mtable
		for _, t := range m.tables {
			if len(t.extra(kindCodeStr, kindCodeInt)) > 0 {
				cands = append(cands, t)
			}
		}
		if len(cands) == 0 {
			return append(m.ddl(r, "create"), m.ddl(r, kind)...)
		}
		t := cands[r.IntN(len(cands))]
		c := &t.cols[t.extra(kindCodeStr, kindCodeInt)[0]]
		m.redump[t.name] = true
		if c.kind == kindCodeStr {
			c.kind = kindCodeInt
			return []string{q("ALTER TABLE `%s` MODIFY `%s` INT", t.name, c.name)}
		}
		c.kind, c.width = kindCodeStr, 12
		return []string{q("ALTER TABLE `%s` MODIFY `%s` VARCHAR(12)", t.name, c.name)}
	case "nowdefault":
		t := pick()
		c := mcol{name: m.fresh("ts"), kind: kindFixed}
		t.cols = append(t.cols, c)
		m.redump[t.name] = true
		return []string{q("ALTER TABLE `%s` ADD COLUMN `%s` DATETIME DEFAULT CURRENT_TIMESTAMP", t.name, c.name)}
	}
	panic("unknown schema change kind " + kind)
}

// rename moves table old of the model, and its re-dump mark, to name.
func (m *ddlModel) rename(old, name string) {
	m.tables[m.find(old)].name = name
	if m.redump[old] {
		delete(m.redump, old)
		m.redump[name] = true
	}
}

// kindPlan is the schema changes of every window: each fold kind at least
// once, more at random, and the re-dump kinds (each at least once) in
// three windows after the first.
func kindPlan(r *rand.Rand, windows, perWindow int) [][]string {
	kinds := slices.Clone(foldKinds)
	for len(kinds) < windows*perWindow {
		kinds = append(kinds, foldKinds[r.IntN(len(foldKinds))])
	}
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	plan := make([][]string, windows)
	for w := range plan {
		plan[w] = kinds[w*perWindow : (w+1)*perWindow : (w+1)*perWindow]
	}
	redump := append(slices.Clone(redumpKinds), redumpKinds[r.IntN(len(redumpKinds))])
	for i, w := range r.Perm(windows - 1)[:len(redump)] {
		ks := plan[w+1]
		plan[w+1] = slices.Insert(ks, r.IntN(len(ks)+1), redump[i])
	}
	return plan
}
