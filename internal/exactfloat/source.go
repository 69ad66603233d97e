package exactfloat

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// ReadSource adds to w the exact FLOAT values of every row of t as conn
// sees it: SELECT of the key columns and of each FLOAT column as
// CAST(f AS DOUBLE). conn must be in verify.ConsistentSnapshot's session
// (NAMES utf8mb4, time_zone '+00:00', empty sql_mode), so key values print
// as the dump's convert to; go-sql-driver/mysql with parseTime=false.
// progress, when not nil, is called every 4096 rows with the rows read.
func ReadSource(ctx context.Context, conn *sql.Conn, t *schema.Table, plan Plan, w *Writer, progress func(int64)) (int64, error) {
	rows, err := conn.QueryContext(ctx, selectSQL(t, plan))
	if err != nil {
		return 0, fmt.Errorf("table %s: select FLOAT values: %w", t.QualifiedName(), err)
	}
	defer rows.Close()
	raw := make([]sql.RawBytes, len(plan.Key)+len(plan.Floats))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	row := make([]rowimage.Cell, len(t.Columns))
	vals := make([]*float32, len(plan.Floats))
	exact := make([]float32, len(plan.Floats))
	var key []byte
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, fmt.Errorf("table %s row %d: %w", t.QualifiedName(), n+1, err)
		}
		for i, j := range plan.Key {
			row[j] = rowimage.RawCell(raw[i])
		}
		if key, err = plan.AppendKey(key[:0], t, row); err != nil {
			return n, fmt.Errorf("table %s row %d: key: %w", t.QualifiedName(), n+1, err)
		}
		for i := range plan.Floats {
			vals[i] = nil
			if v := raw[len(plan.Key)+i]; v != nil {
				if exact[i], err = ParseExact(v); err != nil {
					return n, fmt.Errorf("table %s key %s column %s: %w", t.QualifiedName(), key, t.Columns[plan.Floats[i]].Name, err)
				}
				vals[i] = &exact[i]
			}
		}
		if err := w.Add(key, vals); err != nil {
			return n, fmt.Errorf("table %s: %w", t.QualifiedName(), err)
		}
		n++
		if progress != nil && n%4096 == 0 {
			progress(n)
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("table %s: select FLOAT values after row %d: %w", t.QualifiedName(), n, err)
	}
	return n, nil
}

// selectSQL selects t's key columns, then its FLOAT columns as DOUBLE.
func selectSQL(t *schema.Table, plan Plan) string {
	cols := make([]string, 0, len(plan.Key)+len(plan.Floats))
	for _, j := range plan.Key {
		cols = append(cols, quoteIdent(t.Columns[j].Name))
	}
	for _, j := range plan.Floats {
		cols = append(cols, "CAST("+quoteIdent(t.Columns[j].Name)+" AS DOUBLE)")
	}
	return "SELECT " + strings.Join(cols, ",") + " FROM " + quoteIdent(t.Schema) + "." + quoteIdent(t.Name)
}

func quoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// Changes gives a Writer the values at the dump of the rows changed after
// it, from the index's events of the table in seq order: a key's first
// change carries its row as the dump holds it (the before image of an
// update or delete; an insert, or the new key of an update that moves a
// row, means no row at the dump).
type Changes struct {
	t     *schema.Table
	plan  Plan
	w     *Writer
	seen  map[string]bool
	vals  []*float32
	exact []float32
}

// NewChanges returns Changes feeding w for t (plan = NewPlan(t)).
func NewChanges(t *schema.Table, plan Plan, w *Writer) *Changes {
	return &Changes{t: t, plan: plan, w: w, seen: map[string]bool{},
		vals: make([]*float32, len(plan.Floats)), exact: make([]float32, len(plan.Floats))}
}

// Keys returns how many keys changed.
func (c *Changes) Keys() int { return len(c.seen) }

// Add takes the next event of the table (seq order, after the dump). An
// image without one of the table's FLOAT columns is an *UnfixableError.
func (c *Changes) Add(e change.Event) error {
	switch e.Op {
	case change.OpInsert:
		return c.first(e.PK, nil)
	case change.OpDelete:
		return c.first(e.PK, e.Before)
	case change.OpUpdate:
		if e.PKBefore != "" && e.PKBefore != e.PK {
			if err := c.first(e.PKBefore, e.Before); err != nil {
				return err
			}
			return c.first(e.PK, nil)
		}
		return c.first(e.PK, e.Before)
	}
	return fmt.Errorf("table %s: event %d has op %q", c.t.QualifiedName(), e.Seq, e.Op)
}

// first records key's row at the dump (before; nil: none) unless an
// earlier event did.
func (c *Changes) first(key string, before []byte) error {
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	if before == nil {
		return c.w.Override([]byte(key), nil, false)
	}
	fields, err := rowimage.DecodeImage(before)
	if err != nil {
		return fmt.Errorf("table %s key %s: before image: %w", c.t.QualifiedName(), key, err)
	}
	for i, j := range c.plan.Floats {
		name := c.t.Columns[j].Name
		f := -1
		for k := range fields {
			if strings.EqualFold(fields[k].Name, name) {
				f = k
				break
			}
		}
		if f < 0 { // a DDL since the dump: images of another shape
			return &UnfixableError{Table: c.t.QualifiedName(), Reason: fmt.Sprintf("the before image of key %s in the index has no column %s", key, name)}
		}
		c.vals[i] = nil
		if raw := fields[f].Raw; string(raw) != "null" {
			if c.exact[i], err = ParseExact(raw); err != nil {
				return fmt.Errorf("table %s key %s column %s: before image: %w", c.t.QualifiedName(), key, name, err)
			}
			c.vals[i] = &c.exact[i]
		}
	}
	return c.w.Override([]byte(key), c.vals, true)
}
