package e2e

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// rebuild reads app.<table> at moment at through the moment seam, in the
// test process, as canonical images with their copies.
func rebuild(t *testing.T, e *backupEnv, eng *fold.Engine, at, table string) (map[string]int, moment.Plan, error) {
	t.Helper()
	a, err := when.Parse(at)
	must(t, err)
	cat := moment.LocalCatalog{SourceDir: filepath.Join(e.acts.BackupDir, "main")}
	plan, err := moment.PlanAt(e.ctx, e.store, e.store, cat, "main", a, moment.Selection{Tables: []string{"app." + table}})
	if err != nil {
		return nil, plan, err
	}
	rb := moment.Rebuilder{Source: "main", Engine: eng, Events: moment.IndexEvents{Store: e.store}, Catalog: cat}
	tb, err := rb.Open(e.ctx, plan.Tables[0], nil)
	if err != nil {
		return nil, plan, err
	}
	defer tb.Close()
	got := map[string]int{}
	err = tb.Rows(e.ctx, func(row []rowimage.Cell) error {
		img, err := rowimage.SQLImage(tb.Footer.Table, row)
		if err != nil {
			return err
		}
		got[string(img)]++
		return nil
	})
	return got, plan, err
}

// liveDef is the current stored definition of app.<table> from the index's
// schema history.
func liveDef(t *testing.T, e *backupEnv, table string) *schema.Table {
	t.Helper()
	vs, err := e.store.LatestSchemas(e.ctx, "main")
	must(t, err)
	for _, v := range vs {
		if v.Schema == "app" && v.Table == table && v.Definition != nil {
			d, err := v.Definition.Stored()
			must(t, err)
			return d
		}
	}
	t.Fatalf("no definition of app.%s", table)
	return nil
}

// export runs an Export workflow to its end.
func (e *backupEnv) export(t *testing.T, spec payload.ExportSpec) (workflows.ExportResult, error) {
	t.Helper()
	spec.Source = "main"
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.ExportWorkflowID("main", spec.Out), TaskQueue: payload.TaskQueue},
		workflows.Export, payload.ExportInput{ExportSpec: spec})
	must(t, err)
	var res workflows.ExportResult
	err = run.Get(e.ctx, &res)
	return res, err
}

// refusedAs requires err to be a moment refusal of code.
func refusedAs(t *testing.T, err error, code moment.Code, what string) {
	t.Helper()
	r, ok := moment.IsRefused(err)
	if !ok || r.Code != code {
		t.Fatalf("%s: want a refusal %q, got %v", what, code, err)
	}
	t.Logf("%s refused as expected: %v", what, err)
}

func countRows(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// liveCountsDB reads app.<def> from db as canonical images.
func liveCountsDB(t *testing.T, e *backupEnv, db *sql.DB, def *schema.Table) map[string]int {
	t.Helper()
	cols := make([]string, len(def.Columns))
	for i, c := range def.Columns {
		cols[i] = "`" + c.Name + "`"
	}
	rows, err := db.QueryContext(e.ctx, fmt.Sprintf("SELECT %s FROM `%s`.`%s`", strings.Join(cols, ","), def.Schema, def.Name))
	must(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		raw := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		must(t, rows.Scan(ptrs...))
		vals := make([]rowimage.Cell, len(raw))
		for i, r := range raw {
			vals[i] = rowimage.RawCell(bytes.Clone(r))
		}
		img, err := rowimage.SQLImage(def, vals)
		must(t, err)
		out[string(img)]++
	}
	must(t, rows.Err())
	return out
}

// openDuck opens an in-memory DuckDB with bounded memory.
func openDuck(t *testing.T) *sql.DB {
	t.Helper()
	duck, err := sql.Open("duckdb", "")
	must(t, err)
	t.Cleanup(func() { duck.Close() })
	duck.SetMaxOpenConns(1)
	for _, q := range []string{"SET memory_limit='512MB'", "SET threads=2"} {
		_, err := duck.Exec(q)
		must(t, err)
	}
	return duck
}

// readImages reads a table file to its end as canonical images with their
// copies.
func readImages(t *testing.T, r *snapshot.TableReader) map[string]int {
	t.Helper()
	out := map[string]int{}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		must(t, err)
		img, err := rowimage.SQLImage(r.Table(), row)
		must(t, err)
		out[string(img)]++
	}
}
