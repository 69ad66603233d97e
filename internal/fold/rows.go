package fold

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// fileShift packs (file index, row number) into one BIGINT: file<<40 | row,
// so one sort orders by file, then row (a file holds fewer than 2^40 rows).
const fileShift = 40

// staleRows calls fn, in ascending order, with the row numbers of the table
// file whose key is the key of any effect in w: the rows the window made
// stale. Nullable key columns are compared with IS NOT DISTINCT FROM, so a
// key holding NULLs (every-column keys) matches itself.
func (e *Engine) staleRows(ctx context.Context, tableFile string, w *Window, fn func(int64) error) error {
	base, err := readParquet(tableFile, true)
	if err != nil {
		return err
	}
	eff, err := readParquet(w.File.Path, false)
	if err != nil {
		return err
	}
	q := fmt.Sprintf(`SELECT b.file_row_number FROM %s AS b
WHERE EXISTS (SELECT 1 FROM %s AS c WHERE %s)
ORDER BY 1`, base, eff, KeyMatch(w.Table, "b", "c"))
	if err := e.streamInts(ctx, q, fn); err != nil {
		return fmt.Errorf("stale rows of %s: %w", tableFile, err)
	}
	return nil
}

// KeyMatch is the SQL condition under which a row of table t aliased
// left has the key of a row aliased right: every key column equal (every
// column for a table without a key). It is how a window makes rows of a
// table file stale, here and in the live tail's views. Nullable key
// columns (every-column keys) compare with IS NOT DISTINCT FROM, so a key
// holding NULLs matches itself; the others with =, which lets DuckDB push
// the join's key range into the table scan (row groups outside it are
// skipped).
func KeyMatch(t *schema.Table, left, right string) string {
	keys := t.Key
	if len(keys) == 0 {
		keys = t.ColumnNames()
	}
	conds := make([]string, len(keys))
	for i, k := range keys {
		op := "="
		if j := t.ColumnIndex(k); j < 0 || t.Columns[j].Nullable {
			op = "IS NOT DISTINCT FROM"
		}
		conds[i] = fmt.Sprintf("%[1]s.%[2]s %[3]s %[4]s.%[2]s", quoteIdent(left), quoteIdent(k), op, quoteIdent(right))
	}
	return strings.Join(conds, " AND ")
}

// deadRows calls fn with every row number the .posdel files name, once
// each, ascending.
func (e *Engine) deadRows(ctx context.Context, posdel []string, fn func(int64) error) error {
	if len(posdel) == 0 {
		return nil
	}
	list := make([]string, len(posdel))
	for i, p := range posdel {
		if err := checkPath(p); err != nil {
			return err
		}
		list[i] = quoteString(p)
	}
	q := fmt.Sprintf(`SELECT DISTINCT %s FROM read_parquet([%s]) ORDER BY 1`, quoteIdent(snapshot.ColRow), strings.Join(list, ", "))
	if err := e.streamInts(ctx, q, fn); err != nil {
		return fmt.Errorf("dead rows of %d posdel files: %w", len(posdel), err)
	}
	return nil
}

// newestRows calls fn, ordered by file then row, with (file index, row
// number) of the newest row of every key across files, later files newer
// than earlier ones and later rows newer than earlier rows of one file.
// Without keepDeletes a key whose newest row is a delete is left out.
func (e *Engine) newestRows(ctx context.Context, files []Keyed, keepDeletes bool, fn func(file int, row int64) error) error {
	if len(files) == 0 {
		return nil
	}
	parts := make([]string, len(files))
	for i, f := range files {
		src, err := readParquet(f.Path, true)
		if err != nil {
			return err
		}
		parts[i] = fmt.Sprintf("SELECT (%d::BIGINT << %d) | file_row_number AS dbtrail_at, %s AS k, %s AS op FROM %s",
			i, fileShift, quoteIdent(f.KeyCol), quoteIdent(f.OpCol), src)
	}
	filter := ""
	if !keepDeletes {
		filter = "WHERE op = " + quoteString(snapshot.OpUpsert)
	}
	q := fmt.Sprintf(`SELECT dbtrail_at FROM (
  SELECT max(dbtrail_at) AS dbtrail_at, arg_max(op, dbtrail_at) AS op FROM (%s) GROUP BY k
) %s ORDER BY dbtrail_at`, strings.Join(parts, "\nUNION ALL "), filter)
	err := e.streamInts(ctx, q, func(at int64) error {
		return fn(int(at>>fileShift), at&(1<<fileShift-1))
	})
	if err != nil {
		return fmt.Errorf("newest rows of %d files: %w", len(files), err)
	}
	return nil
}

// copier copies chosen rows of keyed files, visited in (file, row) order.
type copier struct {
	files []Keyed
	cur   int // index of the open file, -1 before the first
	r     *snapshot.TableReader
	at    int64 // rows of r read so far
}

func newCopier(files []Keyed) *copier { return &copier{files: files, cur: -1} }

// row returns row number row of file file, whose key and op come with it.
// Calls must ascend in (file, row).
func (c *copier) row(file int, row int64) ([]rowimage.Cell, string, string, error) {
	if file != c.cur {
		if file < c.cur {
			return nil, "", "", errors.New("fold: rows requested out of order")
		}
		if err := c.Close(); err != nil {
			return nil, "", "", err
		}
		f := c.files[file]
		r, err := snapshot.OpenKeyedFile(f.Path, f.KeyCol, f.OpCol)
		if err != nil {
			return nil, "", "", err
		}
		c.cur, c.r, c.at = file, r, 0
	}
	if row < c.at {
		return nil, "", "", errors.New("fold: rows requested out of order")
	}
	for {
		vals, err := c.r.Next()
		if err == io.EOF {
			return nil, "", "", fmt.Errorf("fold: %s has no row %d", c.files[file].Path, row)
		}
		if err != nil {
			return nil, "", "", fmt.Errorf("fold: read %s: %w", c.files[file].Path, err)
		}
		c.at++
		if c.at-1 == row {
			k, op, _ := c.r.Keyed()
			return vals, k, op, nil
		}
	}
}

// Close closes the open file.
func (c *copier) Close() error {
	if c.r == nil {
		return nil
	}
	err := c.r.Close()
	c.r = nil
	return err
}
