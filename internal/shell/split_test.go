package shell

import (
	"slices"
	"testing"
)

// TestSplitStatements: statements end at a ; outside strings, quoted
// identifiers, dollar quotes and comments; what follows the last one is its
// rest, pending when it holds more than blanks and comments.
func TestSplitStatements(t *testing.T) {
	for _, c := range []struct {
		in      string
		stmts   []string
		rest    string
		pending bool
	}{
		{"SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}, "", false},
		{"SELECT ';' ; SELECT \"a;b\"", []string{"SELECT ';'"}, " SELECT \"a;b\"", true},
		{"SELECT 'it''s;'; x", []string{"SELECT 'it''s;'"}, " x", true},
		{"SELECT E'\\';'; y", []string{`SELECT E'\';'`}, " y", true},
		{"SELECT 'a\\'; b", []string{`SELECT 'a\'`}, " b", true},
		{"SELECT $$a;b$$, $t$c;$t$; z", []string{"SELECT $$a;b$$, $t$c;$t$"}, " z", true},
		{"SELECT $1;", []string{"SELECT $1"}, "", false},
		{"-- c;\nSELECT 1 /* ; /* ; */ ; */;", []string{"-- c;\nSELECT 1 /* ; /* ; */ ; */"}, "", false},
		{"; -- only\n;/* x */;", nil, "", false},
		{"SELECT 1 /* open ;", nil, "SELECT 1 /* open ;", true},
		{"/* open ;", nil, "/* open ;", true},
		{"SELECT 'open ;", nil, "SELECT 'open ;", true},
	} {
		stmts, rest, pending := SplitStatements(c.in)
		if !slices.Equal(stmts, c.stmts) || rest != c.rest || pending != c.pending {
			t.Errorf("%q: got %q, %q, %v; want %q, %q, %v", c.in, stmts, rest, pending, c.stmts, c.rest, c.pending)
		}
	}
}
