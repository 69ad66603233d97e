package jobs

import (
	"strings"
	"testing"
)

// TestRestoreLock: a restore's lock is a valid job name that tells
// targets apart: the target and the schema restored into.
func TestRestoreLock(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range []struct {
		target, into    string
		schemas, tables []string
		want            string
	}{
		{"127.0.0.1:3306", "shop_restored", nil, nil, "127.0.0.1-3306.shop_restored"},
		{"127.0.0.1:3306", "", []string{"shop", "crm"}, nil, "127.0.0.1-3306.shop.crm"},
		{"127.0.0.1:3306", "", nil, nil, "127.0.0.1-3306.all"},
		{"scratch", "", []string{"shop"}, []string{"shop.t"}, "scratch.all"},
		{"db-1.example:3307", "{schema}_old", nil, nil, "db-1.example-3307.-schema-_old"},
		{"127.0.0.1:3306", strings.Repeat("x", 80), nil, nil, ""},
	} {
		got := RestoreLock(c.target, c.into, c.schemas, c.tables)
		if err := CheckName("target", got); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
		if c.want != "" && got != c.want {
			t.Errorf("%+v: %q, want %q", c, got, c.want)
		}
		if seen[got] {
			t.Errorf("%q names two targets", got)
		}
		seen[got] = true
	}
}
