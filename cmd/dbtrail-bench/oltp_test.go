package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestOLTPWriterTransactions: a writer's transactions hold 10 to 30
// statements that switch table at most statements, touch all nine tables,
// and depend only on the writer's number.
func TestOLTPWriterTransactions(t *testing.T) {
	for k := range oltpConns {
		g, again := newOLTPWriter(k), newOLTPWriter(k)
		tables := map[string]int{}
		var stmts, switches int
		for range 5000 {
			s := g.next()
			if !reflect.DeepEqual(s, again.next()) {
				t.Fatalf("writer %d: transaction %d differs between two writers of the same number", k, g.txns)
			}
			if len(s) < 10 || len(s) > 30 {
				t.Fatalf("writer %d: transaction %d has %d statements", k, g.txns, len(s))
			}
			for i, stmt := range s {
				tables[stmtTable(stmt)]++
				if i > 0 && stmtTable(stmt) != stmtTable(s[i-1]) {
					switches++
				}
			}
			stmts += len(s)
		}
		if len(tables) != 9 {
			t.Errorf("writer %d: statements on %d tables: %v", k, len(tables), tables)
		}
		r := float64(switches) / float64(stmts)
		if r < 0.8 {
			t.Errorf("writer %d: %.2f of statements switch table", k, r)
		}
		t.Logf("writer %d: %d statements in %d transactions, %.2f switch table; %v", k, stmts, g.txns, r, tables)
	}
}

// stmtTable is the table an INSERT INTO, UPDATE or DELETE FROM statement
// names.
func stmtTable(stmt string) string {
	for _, p := range []string{"INSERT INTO ", "UPDATE ", "DELETE FROM "} {
		if rest, ok := strings.CutPrefix(stmt, p); ok {
			return strings.Fields(rest)[0]
		}
	}
	return ""
}
