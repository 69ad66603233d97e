package fold

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// A table without a primary or unique key (schema.KeyRow) is keyed by all
// its columns, and may hold the same row several times. A chain cannot
// express that (it keeps one version per key), so such a table is always
// rewritten (snapshot.FullOnly), and its rewrite counts: every upsert effect
// of a row adds one copy, every delete effect removes one, and the order of
// effects does not matter.

// rewriteMultiset writes the KeyRow table of in: the table file's rows minus,
// per row, as many copies as the window deleted net (the first ones in file
// order), then as many copies of each row as the window added net.
func (e *Engine) rewriteMultiset(ctx context.Context, in RewriteInput, tw *snapshot.TableWriter, progress Progress) error {
	if err := e.requireEmptyChain(ctx, in); err != nil {
		return err
	}
	appendRow := func(row []rowimage.Cell) error {
		if err := tw.AppendSQL(row); err != nil {
			return err
		}
		progress.tick("table", tw.Rows())
		return nil
	}
	if in.Window == nil {
		return e.liveRows(ctx, in.TableFile, nil, appendRow)
	}
	stale := in.Window.File.Path + ".posdel"
	if err := e.writeStale(stale, func(fn func(int64) error) error {
		return e.removedCopies(ctx, in.TableFile, in.Window, fn)
	}); err != nil {
		return err
	}
	defer removeQuiet(stale)
	if err := e.liveRows(ctx, in.TableFile, []string{stale}, appendRow); err != nil {
		return err
	}
	return e.addedCopies(ctx, in.Window, appendRow)
}

// requireEmptyChain refuses a KeyRow table whose chain holds rows (written
// before such tables were always rewritten): its meaning is not a multiset.
func (e *Engine) requireEmptyChain(ctx context.Context, in RewriteInput) error {
	some := errors.New("chain holds rows")
	err := e.deadRows(ctx, in.Posdel, func(int64) error { return some })
	if err == nil {
		err = e.newestRows(ctx, in.Upserts, true, func(int, int64) error { return some })
	}
	if errors.Is(err, some) {
		return fmt.Errorf("table %s has no primary or unique key but a chain with changes: take a full backup", in.Table.QualifiedName())
	}
	return err
}

// netByKey is the effects of w grouped by key: the net count (upserts minus
// deletes) and the last effect's row number.
func netByKey(w *Window) (string, error) {
	eff, err := readParquet(w.File.Path, true)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`SELECT %[1]s AS k, sum(CASE WHEN %[2]s = %[3]s THEN 1 ELSE -1 END) AS net, max(file_row_number) AS r
FROM %[4]s GROUP BY %[1]s`, quoteIdent(w.File.KeyCol), quoteIdent(w.File.OpCol), quoteString(snapshot.OpUpsert), eff), nil
}

// removedCopies calls fn, ascending, with the table file's row numbers the
// window removes: for each row the window deleted n copies of (net), the
// first n rows in file order equal to it.
func (e *Engine) removedCopies(ctx context.Context, tableFile string, w *Window, fn func(int64) error) error {
	g, err := netByKey(w)
	if err != nil {
		return err
	}
	base, err := readParquet(tableFile, true)
	if err != nil {
		return err
	}
	eff, err := readParquet(w.File.Path, true)
	if err != nil {
		return err
	}
	conds := allColumns(w.Table, "b", "n")
	q := fmt.Sprintf(`WITH g AS (%s),
n AS (SELECT c.*, -g.net AS copies, g.r AS gid FROM g JOIN %s AS c ON c.file_row_number = g.r WHERE g.net < 0)
SELECT file_row_number FROM (
  SELECT b.file_row_number, n.copies, row_number() OVER (PARTITION BY n.gid ORDER BY b.file_row_number) AS i
  FROM %s AS b JOIN n ON %s
) WHERE i <= copies ORDER BY 1`, g, eff, base, conds)
	if err := e.streamInts(ctx, q, fn); err != nil {
		return fmt.Errorf("removed rows of %s: %w", tableFile, err)
	}
	return nil
}

// addedCopies calls fn with each row the window added net, as many times as
// it added it, in the window's order.
func (e *Engine) addedCopies(ctx context.Context, w *Window, fn func([]rowimage.Cell) error) error {
	g, err := netByKey(w)
	if err != nil {
		return err
	}
	rows, err := e.db.QueryContext(ctx, "SELECT r, net FROM ("+g+") WHERE net > 0 ORDER BY r")
	if err != nil {
		return fmt.Errorf("added rows of %s: %w", w.Table.QualifiedName(), err)
	}
	defer rows.Close()
	c := newCopier([]Keyed{w.File})
	defer c.Close()
	for rows.Next() {
		var r, net int64
		if err := rows.Scan(&r, &net); err != nil {
			return err
		}
		vals, _, _, err := c.row(0, r)
		if err != nil {
			return err
		}
		for range net {
			if err := fn(vals); err != nil {
				return err
			}
		}
	}
	return rows.Err()
}

// allColumns joins two relations on every column of t, NULL matching NULL.
func allColumns(t *schema.Table, a, b string) string {
	conds := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		conds[i] = fmt.Sprintf("%[1]s.%[3]s IS NOT DISTINCT FROM %[2]s.%[3]s", a, b, quoteIdent(c.Name))
	}
	return strings.Join(conds, " AND ")
}
