package schemahist

import (
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func tbl(s, n string, cols ...string) *schema.Table {
	t := &schema.Table{Schema: s, Name: n, KeyKind: schema.KeyPrimary, Key: []string{"id"}}
	t.Columns = append(t.Columns, schema.Column{Name: "id", Type: "int"})
	for _, c := range cols {
		t.Columns = append(t.Columns, schema.Column{Name: c, Type: "int", Nullable: true})
	}
	return t
}

func ver(seq, pos uint64, s, n, ddl string, def *schema.Table) change.SchemaVersion {
	return change.SchemaVersion{Schema: s, Table: n, Seq: seq, BinlogFile: "binlog.000002", BinlogPos: pos, DDL: ddl, Definition: def}
}

func verN(seq, pos uint64, s, n string, version uint32, ddl string, def *schema.Table) change.SchemaVersion {
	v := ver(seq, pos, s, n, ddl, def)
	v.Version = version
	return v
}

var win = Window{FromSeq: 100, ToSeq: 200}

func kinds(l Lineage) string {
	var k []string
	for _, s := range l.Steps {
		k = append(k, string(s.Kind)+":"+s.Table)
	}
	return strings.Join(k, ",")
}

// TestTraceEveryKind: each statement kind, as the refresh and the moment
// planner see it.
func TestTraceEveryKind(t *testing.T) {
	a, b := Key{"db", "a"}, Key{"db", "b"}
	start := map[Key]*schema.Table{a: tbl("db", "a", "v"), b: tbl("db", "b", "w")}
	for _, c := range []struct {
		name  string
		hist  []change.SchemaVersion
		want  map[Key]string // lineage steps; "redump" when refused; "-" absent
		gone  []Key
		base  map[Key]Key
		creat []Key
	}{
		{name: "no change", want: map[Key]string{a: "", b: ""}},
		{name: "index only keeps",
			hist: []change.SchemaVersion{ver(150, 10, "db", "a", "CREATE INDEX i ON a (v)", tbl("db", "a", "v"))},
			want: map[Key]string{a: "keep:a"}},
		{name: "truncate empties",
			hist: []change.SchemaVersion{ver(150, 10, "db", "a", "TRUNCATE TABLE a", tbl("db", "a", "v"))},
			want: map[Key]string{a: "empty:a"}},
		{name: "drop",
			hist: []change.SchemaVersion{ver(150, 10, "db", "a", "DROP TABLE a", nil)},
			want: map[Key]string{a: "-", b: ""}, gone: []Key{a}},
		{name: "create new",
			hist:  []change.SchemaVersion{ver(150, 10, "db", "n", "CREATE TABLE n (id INT PRIMARY KEY)", tbl("db", "n"))},
			want:  map[Key]string{{"db", "n"}: "empty:n"},
			creat: []Key{{"db", "n"}}},
		{name: "drop and re-create starts empty",
			hist: []change.SchemaVersion{ver(150, 10, "db", "a", "DROP TABLE a", nil),
				ver(160, 20, "db", "a", "CREATE TABLE a (id INT PRIMARY KEY, v INT)", tbl("db", "a", "v"))},
			want: map[Key]string{a: "empty:a"}, creat: []Key{a}, gone: []Key{a}},
		{name: "rename continues under the new name",
			hist: []change.SchemaVersion{ver(150, 10, "db", "a", "RENAME TABLE a TO n", nil),
				ver(150, 10, "db", "n", "RENAME TABLE a TO n", tbl("db", "n", "v"))},
			want: map[Key]string{a: "-", {"db", "n"}: "rename:n"}, base: map[Key]Key{{"db", "n"}: a}},
		{name: "swap through a third name (as capture writes it: a version per move)",
			hist: []change.SchemaVersion{
				verN(150, 10, "db", "a", 1, "RENAME TABLE a TO t, b TO a, t TO b", nil),
				verN(150, 10, "db", "t", 1, "RENAME TABLE a TO t, b TO a, t TO b", tbl("db", "t", "v")),
				verN(150, 10, "db", "b", 1, "RENAME TABLE a TO t, b TO a, t TO b", nil),
				verN(150, 10, "db", "a", 2, "RENAME TABLE a TO t, b TO a, t TO b", tbl("db", "a", "w")),
				verN(150, 10, "db", "t", 2, "RENAME TABLE a TO t, b TO a, t TO b", nil),
				verN(150, 10, "db", "b", 2, "RENAME TABLE a TO t, b TO a, t TO b", tbl("db", "b", "v")),
			},
			want: map[Key]string{a: "rename:a", b: "rename:t,rename:b"}, base: map[Key]Key{a: b, b: a}},
		{name: "partition change re-dumps",
			hist: []change.SchemaVersion{ver(150, 10, "db", "a", "ALTER TABLE a TRUNCATE PARTITION p0", tbl("db", "a", "v"))},
			want: map[Key]string{a: "redump"}},
		{name: "a definition from a table map that changed the columns re-dumps",
			hist: []change.SchemaVersion{ver(150, 10, "db", "a", "-- defined from binlog table map metadata", tbl("db", "a", "v", "z"))},
			want: map[Key]string{a: "redump"}},
		{name: "a table the start lacks re-dumps",
			hist: []change.SchemaVersion{ver(150, 10, "db", "x", "ALTER TABLE x ADD z INT", tbl("db", "x", "z"))},
			want: map[Key]string{{"db", "x"}: "redump"}},
		{name: "outside the window is ignored",
			hist: []change.SchemaVersion{ver(99, 10, "db", "a", "DROP TABLE a", nil), ver(201, 10, "db", "b", "DROP TABLE b", nil)},
			want: map[Key]string{a: "", b: ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := Trace(win, start, c.hist)
			for k, want := range c.want {
				l, ok := tr.Tables[k]
				switch {
				case want == "-":
					if ok {
						t.Errorf("%s: exists at the end: %+v", k, l)
					}
				case !ok:
					t.Errorf("%s: missing at the end", k)
				case want == "redump":
					if l.Redump == "" {
						t.Errorf("%s: not re-dumped: %s", k, kinds(l))
					}
				case l.Redump != "":
					t.Errorf("%s: re-dumped: %s", k, l.Redump)
				case kinds(l) != want:
					t.Errorf("%s: steps %q, want %q", k, kinds(l), want)
				}
				if ok && l.Def != nil && (l.Def.Schema != k.Schema || l.Def.Name != k.Table) {
					t.Errorf("%s: definition names %s", k, l.Def.QualifiedName())
				}
			}
			for _, k := range c.gone {
				if _, ok := tr.Gone[k]; !ok {
					t.Errorf("%s: not gone (%v)", k, tr.Gone)
				}
			}
			for k, from := range c.base {
				if tr.Tables[k].Base != from {
					t.Errorf("%s: base %s, want %s", k, tr.Tables[k].Base, from)
				}
			}
			for _, k := range c.creat {
				if !tr.Tables[k].Created {
					t.Errorf("%s: not created", k)
				}
			}
		})
	}
}
