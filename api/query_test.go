package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// queryFixture is the API with q answering /v1/query.
func queryFixture(t *testing.T, q QueryFunc) *fixture {
	t.Helper()
	f := &fixture{t: t, jobs: &fakeJobs{}, log: new(bytes.Buffer)}
	h, err := New(Config{Jobs: f.jobs, ExportDir: "/exports", Log: slog.New(slog.NewTextHandler(f.log, nil)), MaxBodyBytes: 1024, Query: q, Addr: testAddr})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f
}

// TestQueryAnswerWrittenOnce: the rows a QueryFunc returns reach the
// client as they are, in a valid JSON answer with its fields.
func TestQueryAnswerWrittenOnce(t *testing.T) {
	rows := []json.RawMessage{json.RawMessage(`[1,"a\"b",null]`), json.RawMessage(`[2,"` + strings.Repeat("x", 100<<10) + `",{"k":[1]}]`)}
	f := queryFixture(t, func(ctx context.Context, q Question) (QueryAnswer, error) {
		return QueryAnswer{Snapshot: "s1", Columns: []string{"id", "v", "w"}, Types: []string{"INTEGER", "VARCHAR", "JSON"},
			Rows: rows, Truncated: true, Cut: QueryCut{Seq: 7, Binlog: "b.000001:4", Text: "cut"}}, nil
	})
	status, body, _ := f.do("POST", "/v1/query", "", `{"sql": "SELECT 1", "source": "main"}`)
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	raw, _ := json.Marshal(body)
	var a QueryAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if a.Snapshot != "s1" || !a.Truncated || a.Cut.Seq != 7 || len(a.Columns) != 3 || len(a.Rows) != 2 {
		t.Fatalf("answer %+v", body)
	}
	for i, r := range a.Rows {
		var got, want any
		if err := json.Unmarshal(r, &got); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(rows[i], &want)
		if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
			t.Errorf("row %d: %.80s, want %.80s", i, g, w)
		}
	}
	// No row: an empty list, not null.
	f = queryFixture(t, func(ctx context.Context, q Question) (QueryAnswer, error) {
		return QueryAnswer{Snapshot: "s1", Columns: []string{}, Types: []string{}}, nil
	})
	if status, body, _ := f.do("POST", "/v1/query", "", `{"sql": "SELECT 1"}`); status != 200 || body["rows"] == nil || len(body["rows"].([]any)) != 0 {
		t.Fatalf("no row: %d %v", status, body)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestQueryCapsAndDeadline: an answer over the byte cap is a 413 naming
// the cap; a QueryFunc that returns at its deadline is a 408; a refusal a
// 400 on sql.
func TestQueryCapsAndDeadline(t *testing.T) {
	f := queryFixture(t, func(ctx context.Context, q Question) (QueryAnswer, error) {
		switch q.SQL {
		case "big":
			return QueryAnswer{}, &AnswerTooLarge{Cap: 16 << 20}
		case "slow":
			<-ctx.Done()
			return QueryAnswer{}, ctx.Err()
		}
		return QueryAnswer{}, context.Canceled
	})
	status, body, _ := f.do("POST", "/v1/query", "", `{"sql": "big"}`)
	if code, field := errOf(t, body); status != 413 || code != CodeAnswerTooLarge || field != "sql" || !strings.Contains(mustJSON(t, body), "16777216 bytes") {
		t.Errorf("over the cap: %d %v", status, body)
	}
	status, body, _ = f.do("POST", "/v1/query", "", `{"sql": "slow", "timeout_ms": 20}`)
	if code, _ := errOf(t, body); status != 408 || code != CodeTimeout {
		t.Errorf("past the deadline: %d %v", status, body)
	}
}
