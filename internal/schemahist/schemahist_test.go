package schemahist

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func at(seq uint64, file string, pos uint64) change.SchemaVersion {
	return change.SchemaVersion{Seq: seq, BinlogFile: file, BinlogPos: pos, Definition: &schema.Table{}}
}

// TestWindowAndCut: the seq decides between a window's ends, the binlog
// position at them; a position that cannot be ordered, or an end without
// one, counts as inside (the refresh planner and the moment planner both
// place versions with these two rules).
func TestWindowAndCut(t *testing.T) {
	w := Window{FromSeq: 100, From: binlogpos.Position{File: "binlog.000002", Pos: 500},
		ToSeq: 200, To: binlogpos.Position{File: "binlog.000003", Pos: 900}}
	for _, c := range []struct {
		name string
		v    change.SchemaVersion
		in   bool
	}{
		{"before the start seq", at(99, "binlog.000002", 900), false},
		{"at the start seq, at its position", at(100, "binlog.000002", 500), false},
		{"at the start seq, after its position", at(100, "binlog.000002", 501), true},
		{"between the seqs", at(150, "binlog.000001", 4), true},
		{"at the end seq, at its position", at(200, "binlog.000003", 900), true},
		{"at the end seq, after its position", at(200, "binlog.000003", 901), false},
		{"at the end seq, unordered position", at(200, "other.000001", 5), true},
		{"after the end seq", at(201, "binlog.000003", 4), false},
	} {
		if got := w.Holds(c.v); got != c.in {
			t.Errorf("%s: Holds = %v, want %v", c.name, got, c.in)
		}
	}
	noPos := Window{FromSeq: 100, ToSeq: 200}
	if !noPos.Holds(at(200, "binlog.000009", 1)) {
		t.Error("an end without a position: a version at its seq is inside")
	}
	cut := binlogpos.Position{File: "binlog.000003", Pos: 900}
	for _, c := range []struct {
		v     change.SchemaVersion
		pos   binlogpos.Position
		apply bool
	}{
		{at(199, "binlog.000009", 1), cut, true},
		{at(200, "binlog.000003", 900), cut, true},
		{at(200, "binlog.000003", 901), cut, false},
		{at(200, "binlog.000003", 901), binlogpos.Position{}, true},
		{at(201, "binlog.000001", 1), cut, false},
	} {
		if got := AtOrBefore(c.v, 200, c.pos); got != c.apply {
			t.Errorf("AtOrBefore(%+v, 200, %v) = %v, want %v", c.v, c.pos, got, c.apply)
		}
	}
}

// TestEveryDDLKind: each kind of statement the schema history records, as
// named in messages and as judged for rows changed without row events.
func TestEveryDDLKind(t *testing.T) {
	for _, c := range []struct {
		ddl, verb string
		keeps     bool
	}{
		{"ALTER TABLE a ADD c INT", "ALTER", true},
		{"alter table a drop column c", "ALTER", true},
		{"ALTER TABLE a ADD PARTITION (PARTITION p2 VALUES LESS THAN (10))", "ALTER (partitions or tablespace)", false},
		{"ALTER TABLE a IMPORT TABLESPACE", "ALTER (partitions or tablespace)", false},
		{"CREATE INDEX i ON a (c)", "CREATE", true},
		{"DROP INDEX i ON a", "DROP", true},
		{"CREATE TABLE a (id INT PRIMARY KEY)", "CREATE", false},
		{"DROP TABLE a", "DROP", false},
		{"  truncate table a", "TRUNCATE", false},
		{"-- note\nDROP TABLE a", "DROP", false},
		{"# note\n/* x */ RENAME TABLE a TO b", "RENAME", false},
		{"/* unterminated", "DDL", false},
		{"-- defined from binlog table map metadata", "a redefinition from a binlog table map", false},
		{"-- read from information_schema", "a definition read from the source", false},
		{"OPTIMIZE TABLE a", "DDL", false},
	} {
		if got := Verb(c.ddl); got != c.verb {
			t.Errorf("Verb(%q) = %q, want %q", c.ddl, got, c.verb)
		}
		v := change.SchemaVersion{DDL: c.ddl, Definition: &schema.Table{}}
		if got := KeepsRows(v); got != c.keeps {
			t.Errorf("KeepsRows(%q) = %v, want %v", c.ddl, got, c.keeps)
		}
	}
	if KeepsRows(change.SchemaVersion{DDL: "ALTER TABLE a ADD c INT"}) {
		t.Error("a version that removes the table keeps no rows")
	}
	if got := Abbreviate("SELECT\n   1,\t2", 20); got != "SELECT 1, 2" {
		t.Fatal(got)
	}
	if got := Abbreviate("ALTER TABLE abcdefghij", 5); got != "ALTER…" {
		t.Fatal(got)
	}
}

func TestShapeDiff(t *testing.T) {
	a := &schema.Table{Columns: []schema.Column{{Name: "id", Type: "int"}, {Name: "v", Type: "varchar", Length: 10}}, KeyKind: "primary", Key: []string{"id"}}
	b := &schema.Table{Columns: []schema.Column{{Name: "id", Type: "int"}, {Name: "v", Type: "varchar", Length: 20}, {Name: "w", Type: "int", Nullable: true}}, KeyKind: "primary", Key: []string{"id"}}
	if got, want := ShapeDiff(a, b), "column v: varchar(10) not null → varchar(20) not null, column w added"; got != want {
		t.Errorf("ShapeDiff = %q, want %q", got, want)
	}
	if got := ShapeDiff(a, a); got != "definitions differ" {
		t.Errorf("ShapeDiff of one shape = %q", got)
	}
}
