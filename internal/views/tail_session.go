package views

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Tail returns the tail the views read (nil without SessionOptions.Tail).
func (s *Session) Tail() *Tail { return s.tail }

// reloadTail prepares a new tail and loads the views of its snapshot and
// changes; the previous tail's folder is removed once they replaced its
// views. It reports whether tables or columns changed.
func (s *Session) reloadTail(ctx context.Context) (bool, error) {
	if err := os.MkdirAll(s.tailRoot, filemode.Dir()); err != nil {
		return false, fmt.Errorf("views: tail folder: %w", err)
	}
	dir, err := os.MkdirTemp(s.tailRoot, "tail-")
	if err != nil {
		return false, fmt.Errorf("views: tail folder: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(dir)
		}
	}()
	tail, err := s.opt.Tail(ctx, dir)
	if err != nil {
		return false, err
	}
	if tail.Snapshot == "" {
		return false, fmt.Errorf("views: the tail names no snapshot")
	}
	tables := s.tables
	if tail.Snapshot != s.loaded {
		snapDir := filepath.Join(s.opt.SourceDir, snapshot.SnapshotsDir, tail.Snapshot)
		if tables, err = tablesFrom(ctx, s.conn, snapDir); err != nil {
			return false, err
		}
		if len(tables) == 0 {
			return false, fmt.Errorf("views: snapshot %s holds no table", tail.Snapshot)
		}
	}
	var b bytes.Buffer
	if err := WriteTail(&b, s.opt.Options, tables, tail); err != nil {
		return false, err
	}
	changed := !sameShape(s.tables, tables)
	if err := s.replace(ctx, tables, b.Bytes()); err != nil {
		return false, err
	}
	if s.tailDir != "" {
		if err := os.RemoveAll(s.tailDir); err != nil {
			return false, fmt.Errorf("views: remove the previous tail: %w", err)
		}
	}
	keep = true
	s.loaded, s.tail, s.tailDir = tail.Snapshot, tail, dir
	return changed, nil
}

// sameShape reports whether two lists of tables have the same names and
// columns in the same order.
func sameShape(a, b []TableRef) bool {
	return slices.EqualFunc(a, b, func(x, y TableRef) bool {
		return x.Schema == y.Schema && x.Table == y.Table && slices.Equal(x.Columns, y.Columns)
	})
}

// stagePending stages the pending tables stmt names (every pending table
// when what it names cannot be told: it does not parse as SELECT
// statements, or it calls a table function) and replaces their views with
// views of their changes. The cut stays the tail's.
func (s *Session) stagePending(ctx context.Context, stmt string) error {
	if s.tail == nil || len(s.tail.Pending) == 0 {
		return nil
	}
	names, all := s.named(ctx, stmt)
	var stage []string
	for name := range s.tail.Pending {
		if all || names[name] {
			stage = append(stage, name)
		}
	}
	if len(stage) == 0 {
		return nil
	}
	slices.Sort(stage)
	if err := s.tail.Stage(ctx, stage); err != nil {
		return err
	}
	var tables []TableRef
	for _, t := range s.tables {
		if slices.Contains(stage, t.Schema+"."+t.Table) {
			tables = append(tables, t)
		}
	}
	var b bytes.Buffer
	if err := WriteTail(&b, s.opt.Options, tables, s.tail); err != nil {
		return err
	}
	if _, err := s.conn.ExecContext(ctx, b.String()); err != nil {
		return fmt.Errorf("views: load the tail's views of %s: %w", strings.Join(stage, ", "), err)
	}
	return nil
}

// named returns the schema.table names stmt reads, from DuckDB's parse
// of it (json_serialize_sql: every BASE_TABLE reference, CTEs and
// subqueries included), or all when that cannot be told.
func (s *Session) named(ctx context.Context, stmt string) (names map[string]bool, all bool) {
	var text string
	if err := s.conn.QueryRowContext(ctx, "SELECT json_serialize_sql("+quoteString(stmt)+")::VARCHAR").Scan(&text); err != nil {
		return nil, true
	}
	var tree any
	if err := json.Unmarshal([]byte(text), &tree); err != nil {
		return nil, true
	}
	if m, ok := tree.(map[string]any); !ok || m["error"] != false {
		return nil, true
	}
	names = map[string]bool{}
	all = false
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			switch v["type"] {
			case "BASE_TABLE":
				schemaName, _ := v["schema_name"].(string)
				table, _ := v["table_name"].(string)
				names[schemaName+"."+table] = true
			case "TABLE_FUNCTION":
				all = true
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(tree)
	return names, all
}
