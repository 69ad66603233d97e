package api

import (
	"context"
	"encoding/json"
	"testing"
)

// TestHistoryRoute: GET /v1/history checks its parameters before asking
// the HistoryFunc (table as schema.table, a key, a limit in range), passes
// the source, table, key and limit, answers the versions (an empty list,
// not null, for none) and 501 without a HistoryFunc.
func TestHistoryRoute(t *testing.T) {
	var asked []string
	var limits []int
	f := newFixture(t, true, func(c *Config) {
		c.History = func(_ context.Context, source, table, key string, limit int) (History, error) {
			asked = append(asked, source+" "+table+" "+key)
			limits = append(limits, limit)
			if key == "none" {
				return History{Source: source, Table: table, Key: key}, nil
			}
			return History{Source: source, Table: table, Key: key, Versions: []RowVersion{{Seq: 7, Op: "insert", Key: json.RawMessage("1")}}}, nil
		}
	})
	for _, c := range []struct {
		query, field string
	}{{"?key=1", "table"}, {"?table=acct&key=1", "table"}, {"?table=app.acct", "key"}, {"?table=app.acct&key=1&limit=0", "limit"},
		{"?table=app.acct&key=1&limit=1001", "limit"}, {"?table=app.acct&key=1&source=a/b", "source"}, {"?table=app.acct&key=1&x=1", "x"}} {
		st, body, _ := f.do("GET", "/v1/history"+c.query, roSecret, "")
		e, _ := body["error"].(map[string]any)
		if st != 400 || e["field"] != c.field {
			t.Errorf("GET /v1/history%s: %d %v, want 400 on %s", c.query, st, body, c.field)
		}
	}
	if len(asked) != 0 {
		t.Fatalf("bad requests reached the HistoryFunc: %v", asked)
	}
	st, body, _ := f.do("GET", "/v1/history?table=app.acct&key=1&limit=5", roSecret, "")
	vs, _ := body["versions"].([]any)
	if st != 200 || len(vs) != 1 || body["table"] != "app.acct" || asked[0] != "main app.acct 1" || limits[0] != 5 {
		t.Fatalf("history: %d %v (asked %v %v)", st, body, asked, limits)
	}
	st, body, _ = f.do("GET", "/v1/history?table=app.acct&key=none", roSecret, "")
	if vs, ok := body["versions"].([]any); st != 200 || !ok || len(vs) != 0 || limits[1] != DefaultHistoryVersions {
		t.Fatalf("no versions: %d %v", st, body)
	}
	if st, _, _ := f.do("GET", "/v1/history?table=app.acct&key=1", "", ""); st != 401 {
		t.Fatalf("without a token: %d", st)
	}
	off := newFixture(t, false)
	if st, body, _ := off.do("GET", "/v1/history?table=app.acct&key=1", "", ""); st != 501 {
		t.Fatalf("without a HistoryFunc: %d %v", st, body)
	}
}
