package views

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// stagingTail is a tail of one pending table, shop.orders, whose changes
// are a table file of one row; it records what it was asked to stage.
type stagingTail struct {
	t      *testing.T
	id     string
	staged [][]string
}

func (f *stagingTail) prepare(s **Session) func(ctx context.Context, dir string) (*Tail, error) {
	return func(ctx context.Context, dir string) (*Tail, error) {
		tail := &Tail{Snapshot: f.id, Note: "cut: test", Pending: map[string]bool{"shop.orders": true},
			Windows: map[string]*Window{}, Files: map[string]string{}}
		tail.Stage = func(ctx context.Context, names []string) error {
			f.staged = append(f.staged, names)
			path := filepath.Join(dir, "orders.parquet")
			if _, err := (*s).conn.ExecContext(ctx, "COPY (SELECT 9 AS id, '99.00' AS total) TO "+quoteString(path)+" (FORMAT parquet)"); err != nil {
				return err
			}
			for _, n := range names {
				tail.Files[n] = path
				delete(tail.Pending, n)
			}
			return nil
		}
		return tail, nil
	}
}

// TestSessionTailStagesNamedTables: a pending table's changes are staged
// when a statement names it (directly, in a CTE or a subquery, or when a
// table function reads it), once, at the tail's cut;
// a statement naming other tables stages nothing; and the view of a
// pending table fails, naming it, instead of answering the snapshot's rows.
func TestSessionTailStagesNamedTables(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	id := viewstest.Publish(t, src, ordersV1, news)
	ctx := context.Background()
	open := func() (*Session, *stagingTail) {
		f := &stagingTail{t: t, id: id}
		var s *Session
		s = openSession(t, SessionOptions{Options: Options{SourceDir: src}, Tail: f.prepare(&s)})
		return s, f
	}
	query := func(s *Session, q string) []string {
		t.Helper()
		rows, _, err := s.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows.Close()
		return rowsOf(t, s.conn, q)
	}

	s, f := open()
	if got := query(s, "SELECT count(*) FROM crm.news"); !slices.Equal(got, []string{"1"}) || len(f.staged) != 0 {
		t.Fatalf("a statement on crm.news: %v, staged %v", got, f.staged)
	}
	// Read without staging: the stand-in fails, naming the table.
	if _, err := s.conn.QueryContext(ctx, "SELECT * FROM shop.orders"); err == nil || !strings.Contains(err.Error(), "shop.orders after the snapshot were not staged") {
		t.Fatalf("the pending view read without staging: %v", err)
	}
	if got := query(s, "WITH o AS (SELECT * FROM shop.orders) SELECT id, total::VARCHAR FROM o"); !slices.Equal(got, []string{"9|99.00"}) {
		t.Fatalf("shop.orders after staging: %v", got)
	}
	query(s, "SELECT (SELECT max(id) FROM shop.orders) FROM crm.news")
	if len(f.staged) != 1 || !slices.Equal(f.staged[0], []string{"shop.orders"}) {
		t.Fatalf("staged %v, want shop.orders once", f.staged)
	}

	s, f = open()
	query(s, "SELECT count(*) FROM crm.news WHERE id IN (SELECT id FROM shop.orders)")
	if len(f.staged) != 1 {
		t.Fatalf("a table named in a subquery: staged %v", f.staged)
	}
	// A table function stages what it reads (bound against the stand-ins
	// first), and nothing when it reads no pending table.
	s, f = open()
	query(s, "SELECT count(*) FROM query_table('crm.news')")
	if len(f.staged) != 0 {
		t.Fatalf("a table function reading crm.news: staged %v, want nothing", f.staged)
	}
	if got := query(s, "SELECT id FROM query_table('shop.orders')"); !slices.Equal(got, []string{"9"}) || len(f.staged) != 1 {
		t.Fatalf("a table function reading shop.orders: %v, staged %v, want it staged once", got, f.staged)
	}
	// A statement refused, or failing to bind, stages nothing.
	s, f = open()
	for _, q := range []string{"SELEC * FROM shop.orders", "SELECT * FROM shop.orders; SELECT 1", "SELECT enable_logging()",
		"SELECT * FROM shop.orders, truncate_duckdb_logs()", "COPY shop.orders TO 'x.csv'",
		"SELECT * FROM read_csv('" + filepath.Join(src, "nothing.csv") + "')"} {
		if rows, _, err := s.Query(ctx, q); err == nil {
			rows.Close()
			t.Errorf("%s: answered, want it refused", q)
		}
	}
	if len(f.staged) != 0 {
		t.Fatalf("refused statements staged %v", f.staged)
	}
	s, f = open()
	if got := query(s, "DESCRIBE shop.orders"); len(got) != 2 || len(f.staged) != 1 {
		t.Fatalf("DESCRIBE of a pending table: %v, staged %v", got, f.staged)
	}
}
