package foldplan

import (
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// TestSchemaChangesInTheWindow: what the plan does with each kind of
// schema change (schemahist.Trace decides the steps).
func TestSchemaChangesInTheWindow(t *testing.T) {
	in := pos("binlog.000010", 5000) // inside the window
	altered := tdef(kA, col("id", "int", 0), col("v", "varchar", 10), col("c", "int", 0))
	type want struct {
		action Action
		reason string
	}
	for _, tc := range []struct {
		name    string
		vers    []change.SchemaVersion
		current map[TableKey]*schema.Table // replaces Current entries (nil value deletes)
		want    map[TableKey]want
	}{
		{name: "ALTER adds a NOT NULL column: reshaped (the implicit 0)",
			vers:    []change.SchemaVersion{version(kA, 150, in, "ALTER TABLE a ADD c INT NOT NULL", altered)},
			current: map[TableKey]*schema.Table{kA: altered},
			want:    map[TableKey]want{kA: {ActionRewrite, "rewrite: ALTER at seq 150 (`ALTER TABLE a ADD c INT NOT NULL`) reshapes its rows (column c added)"}}},
		{name: "ALTER converts a column's values: re-dumped",
			vers:    []change.SchemaVersion{version(kA, 150, in, "ALTER TABLE a MODIFY v INT NOT NULL", tdef(kA, col("id", "int", 0), col("v", "int", 0)))},
			current: map[TableKey]*schema.Table{kA: tdef(kA, col("id", "int", 0), col("v", "int", 0))},
			want:    map[TableKey]want{kA: {ActionRedump, "redump: ALTER at seq 150 (`ALTER TABLE a MODIFY v INT NOT NULL`)"}}},
		{name: "TRUNCATE: rewritten from empty",
			vers: []change.SchemaVersion{version(kA, 150, in, "TRUNCATE TABLE a", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionRewrite, "rewrite: TRUNCATE at seq 150 (`TRUNCATE TABLE a`) empties it"}}},
		{name: "partition drop: re-dumped",
			vers: []change.SchemaVersion{version(kA, 150, in, "/* tool */ alter table a truncate partition p0", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionRedump, "ALTER (partitions or tablespace) at seq 150"}}},
		{name: "index only: the files are kept, the definition moves",
			vers: []change.SchemaVersion{version(kA, 150, in, "CREATE INDEX i ON a (v)", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionPair, "its definition moved (CREATE at seq 150"}}},
		{name: "DROP",
			vers:    []change.SchemaVersion{version(kA, 150, in, "DROP TABLE a", nil)},
			current: map[TableKey]*schema.Table{kA: nil},
			want:    map[TableKey]want{kA: {ActionDrop, "drop: DROP at seq 150 (`DROP TABLE a`) removes it"}}},
		{name: "RENAME",
			vers: []change.SchemaVersion{version(kA, 150, in, "RENAME TABLE a TO n", nil),
				version(kN, 150, in, "RENAME TABLE a TO n", tdef(kN, col("id", "int", 0), col("v", "varchar", 10)))},
			current: map[TableKey]*schema.Table{kA: nil, kN: tdef(kN, col("id", "int", 0), col("v", "varchar", 10))},
			want:    map[TableKey]want{kN: {ActionRewrite, "RENAME at seq 150 (`RENAME TABLE a TO n`) renames db.a to db.n"}}},
		{name: "CREATE of a new table",
			vers:    []change.SchemaVersion{version(kN, 160, in, "CREATE TABLE n (id INT PRIMARY KEY)", stdDef(kN))},
			current: map[TableKey]*schema.Table{kN: stdDef(kN)},
			want:    map[TableKey]want{kN: {ActionRewrite, "CREATE at seq 160 (`CREATE TABLE n (id INT PRIMARY KEY)`) creates it empty"}}},
		{name: "dropped and re-created",
			vers: []change.SchemaVersion{version(kA, 150, in, "DROP TABLE a", nil),
				version(kA, 151, in, "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(10))", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionRewrite, "CREATE at seq 151"}}},
		{name: "redefined from a table map, same shape",
			vers: []change.SchemaVersion{version(kA, 150, in, "-- defined from binlog table map metadata", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionPair, "a redefinition from a binlog table map at seq 150"}}},
		{name: "DDL right after the previous snapshot carries its seq",
			vers: []change.SchemaVersion{version(kA, 100, pos("binlog.000010", 1200), "TRUNCATE a", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionRewrite, "TRUNCATE at seq 100"}}},
		{name: "DDL at the cut's seq, before the cut position",
			vers: []change.SchemaVersion{version(kA, 200, pos("binlog.000011", 500), "TRUNCATE a", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionRewrite, "TRUNCATE at seq 200"}}},
		{name: "unorderable position at an end seq counts as inside",
			vers: []change.SchemaVersion{version(kA, 100, pos("bad", 1), "TRUNCATE a", stdDef(kA))},
			want: map[TableKey]want{kA: {ActionRewrite, "TRUNCATE at seq 100"}}},
		{name: "outside the window is ignored",
			vers: []change.SchemaVersion{
				version(kA, 99, in, "TRUNCATE a", stdDef(kA)),
				version(kA, 100, pos("binlog.000010", 1000), "TRUNCATE a", stdDef(kA)), // in the previous snapshot
				version(kA, 200, pos("binlog.000011", 501), "TRUNCATE a", stdDef(kA)),  // after the cut
				version(kA, 201, in, "TRUNCATE a", stdDef(kA)),
			},
			want: map[TableKey]want{kA: {ActionPair, "pair: 1 rows changed"}}},
		{name: "a table created and dropped inside the window is ignored",
			vers: []change.SchemaVersion{version(kN, 150, in, "CREATE TABLE n (id INT)", stdDef(kN)),
				version(kN, 160, in, "DROP TABLE n", nil)},
			want: map[TableKey]want{kA: {ActionPair, "pair: 1 rows changed"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFx().add(kA, plain(0, 1)...).add(kB, plain(0, 1)...)
			f.in.Changes[kA], f.in.Changes[kB] = 1, 1
			f.in.Schemas = tc.vers
			for k, d := range tc.current {
				if d == nil {
					delete(f.in.Current, k)
				} else {
					f.in.Current[k] = d
				}
			}
			p := f.plan(t)
			expect(t, p, kB, ActionPair) // the other table keeps its decision
			if p.Refused {
				t.Fatalf("refused: %+v", p)
			}
			var redump []TableKey
			for _, k := range sortedKeys(tc.want) {
				w := tc.want[k]
				expect(t, p, k, w.action, w.reason)
				if w.action == ActionRedump {
					redump = append(redump, k)
				}
			}
			if !slices.Equal(p.Redump, redump) {
				t.Fatalf("redump %v, want %v", p.Redump, redump)
			}
			if len(p.Tables) != 2+len(tc.want)-1-boolInt(tc.want[kA] == (want{}) && tc.current[kA] == nil && tc.current != nil) {
				t.Logf("tables: %v", p.Tables)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRedumpedTable: a table a partial full backup read again is rewritten
// from its partial snapshot, across the window from the dump to the cut.
func TestRedumpedTable(t *testing.T) {
	f := newFx().add(kA, plain(0, 1)...).add(kB, plain(0, 1)...)
	altered := tdef(kA, col("id", "int", 0), col("v", "varchar", 10), col("c", "int", 0))
	f.in.Schemas = []change.SchemaVersion{version(kA, 150, pos("binlog.000010", 5000), "ALTER TABLE a ADD c INT NOT NULL DEFAULT (1 + 1)", altered)}
	f.in.Current[kA] = altered
	f.in.Redumped = map[TableKey]Redumped{kA: {SnapshotID: "p1", Seq: 180, Position: binlogpos.Position{File: "binlog.000011", Pos: 100, Seq: 180}, Def: altered}}
	tp := expect(t, f.plan(t), kA, ActionRewrite, "re-dumped alone at seq 180 (partial snapshot p1)")
	if tp.Base != "p1" || tp.BaseSeq != 180 {
		t.Fatalf("%+v", tp)
	}
	// Re-dumped after the cut: refused.
	f.in.Redumped[kA] = Redumped{SnapshotID: "p1", Seq: 250, Def: altered}
	expect(t, f.plan(t), kA, ActionRefuse, "after the cut")
}

func TestShapeChangeWithoutDDL(t *testing.T) {
	for _, tc := range []struct {
		name string
		cur  *schema.Table
		want string
	}{
		{"type", tdef(kA, col("id", "int", 0), col("v", "varchar", 20)), "column v: varchar(10) not null → varchar(20) not null"},
		{"unsigned", tdef(kA, schema.Column{Name: "id", Type: "int", Unsigned: true}, col("v", "varchar", 10)), "column id: int not null → int unsigned not null"},
		{"dropped", tdef(kA, col("id", "int", 0)), "column v dropped"},
		{"renamed", tdef(kA, col("id", "int", 0), col("w", "varchar", 10)), "column v dropped, column w added"},
		{"order", tdef(kA, col("v", "varchar", 10), col("id", "int", 0)), "column order changed, key primary(id) → primary(v)"},
		{"key", &schema.Table{Schema: "db", Name: "a", Columns: stdDef(kA).Columns, Key: []string{"id", "v"}, KeyKind: schema.KeyRow}, "key primary(id) → row(id,v)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFx().add(kA, plain(0, 1)...)
			f.in.Current[kA] = tc.cur
			p := f.plan(t)
			expect(t, p, kA, ActionRefuse, "refused: columns differ from the table file: "+tc.want)
			if !p.Refused {
				t.Fatal(p)
			}
		})
	}
	// Index or charset default changes that leave the shape alone are not refused.
	f := newFx().add(kA, plain(0, 1)...)
	f.in.Current[kA].Indexes = []schema.Index{{Name: "i", Columns: []string{"v"}}}
	expect(t, f.plan(t), kA, ActionLink)
}

func TestTablesThatAppearOrVanish(t *testing.T) {
	f := newFx().add(kA, plain(0, 1)...).add(kB, plain(0, 1)...)
	delete(f.in.Current, kB)
	f.in.Current[kN] = stdDef(kN)
	f.in.Current[TableKey{"db", "gone"}] = nil // nil: does not exist
	f.in.Changes[TableKey{"db", "temp"}] = 9   // changes of a table in no snapshot are ignored
	p := f.plan(t)
	want := []string{"db.b: the table no longer exists at the cut"}
	if !p.Refused || !slices.Equal(p.Reasons, want) || len(p.Tables) != 3 {
		t.Fatalf("%q\n%+v", p.Reasons, p)
	}
	expect(t, p, kA, ActionLink)
	if tp := tableOf(t, p, kN); tp.Kind != "" || tp.Links != nil {
		t.Fatalf("%+v", tp)
	}
}

func TestRefusedTableIgnoresCompacted(t *testing.T) {
	f := newFx().add(kA, plain(0, 15)...)
	f.in.Compacted[kA] = compactedFor(f, kA, 0, 14)
	f.in.Current[kA] = nil // its definition at the cut disagrees with its files
	tp := expect(t, f.plan(t), kA, ActionRefuse)
	if tp.UseCompacted != nil || !tp.DropCompacted || tp.CompactNote != "compacted range 000000-000014 in .compact/ ignored: the table is refused" {
		t.Fatalf("%+v", tp)
	}
}

func TestDescribeVersions(t *testing.T) {
	var vs []change.SchemaVersion
	for i := range 5 {
		vs = append(vs, version(kA, uint64(150+i), pos("binlog.000010", 5000), "TRUNCATE a", stdDef(kA)))
	}
	got := describeVersions(vs, vs)
	if !strings.HasPrefix(got, "5 schema changes in the window: TRUNCATE at seq 150") || !strings.HasSuffix(got, "TRUNCATE at seq 152 (`TRUNCATE a`), and 2 more") {
		t.Fatal(got)
	}
}

func TestMissingDigestRewrites(t *testing.T) {
	f := newFx().add(kA, plain(0, 1)...)
	delete(f.in.Prev.Files, "db/a.000001.upserts")
	expect(t, f.plan(t), kA, ActionRewrite, "rewrite: the previous manifest has no digest for db/a.000001.upserts")
}
