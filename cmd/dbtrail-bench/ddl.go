package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// The ddl benchmark (issue 32, "Schema changes without a full dump"): the
// scale benchmark's source (tables of app: id INT key, pad, n BIGINT, d),
// capture running, one `dbtrail worker` (not pinned: mydumper is its
// child), a timed FullBackup of every table, then a Refresh with no change
// (the fixed cost of a refresh), then per schema change the statement on
// the source, capture caught up, and a timed Refresh. Each refresh's time
// is divided by the full backup's (the run it replaces), and the rows it
// read from the source are taken from its result (a re-dump's rows, every
// row when a full backup ran in its place) beside the source's own
// Rows_read counter over the refresh.

// ddlCase is one schema change of the benchmark.
type ddlCase struct {
	label  string  // short name in the rows
	table  string  // the table it changes, in schema app
	stmt   string  // the statement run on the source
	target float64 // the most refresh time ÷ full backup time that meets the target
	// redump: the rules re-dump the table, so the refresh reads exactly its
	// rows from the source; otherwise it reads none.
	redump bool
}

// ddlCases are the changes, in the order they run: an ADD COLUMN with a
// constant default (folded from the previous file) and a type change that
// converts values (BIGINT → VARCHAR: re-dumped alone).
func ddlCases() []ddlCase {
	return []ddlCase{
		{label: "ADD COLUMN", table: scaleTable(7), stmt: "ALTER TABLE " + scaleTable(7) + " ADD COLUMN note VARCHAR(20) DEFAULT 'x'", target: 0.05},
		{label: "type change", table: scaleTable(8), stmt: "ALTER TABLE " + scaleTable(8) + " MODIFY n VARCHAR(20)", target: 0.1, redump: true},
	}
}

// ddlRun is one measured refresh of the benchmark.
type ddlRun struct {
	c   ddlCase
	run scaleRun
	res workflows.RefreshResult
	err error // the refresh failed
	// rowsRead is the source's Rows_read over the refresh.
	rowsRead int64
	// redumpTook is the span of the partial full backup (0 when none ran).
	redumpTook time.Duration
	// verify is the changed table's verdict against the source after the
	// refresh (outside its time).
	verify string
}

// ddlFull is the measured full backup.
type ddlFull struct {
	took     time.Duration
	rowsRead int64
}

// benchDDL runs the ddl benchmark on tables tables of rows rows each.
func benchDDL(ctx context.Context, tables, rows int) ([]result, error) {
	if tables < 8 || rows < 1000 {
		return nil, fmt.Errorf("ddl: --ddl-tables %d, --ddl-rows %d: at least 8 tables (t07 and t08 change) of 1,000 rows", tables, rows)
	}
	e, err := startScaleEnv(ctx, tables, rows)
	if err != nil {
		return nil, err
	}
	defer e.close()
	defer e.startCapture(ctx)()
	cfg := &scaleConfig{queue: "ddl"}
	defer cfg.stop()
	w, err := e.startWorker(ctx, "ddl/w1", cfg.queue, e.s3.URL(cfg.queue), -1)
	if err != nil {
		return nil, err
	}
	cfg.workers = append(cfg.workers, w)
	if err := e.waitPollers(ctx, cfg); err != nil {
		return nil, err
	}
	if err := e.waitCaughtUp(ctx); err != nil {
		return nil, err
	}
	var full ddlFull
	before, err := e.sourceRowsRead(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.fullBackup(ctx, cfg); err != nil {
		return nil, err
	}
	after, err := e.sourceRowsRead(ctx)
	if err != nil {
		return nil, err
	}
	full = ddlFull{took: cfg.fullDur, rowsRead: after - before}
	fmt.Fprintf(os.Stderr, "ddl: full backup of %d tables × %d rows: %s\n", tables, rows, full.took.Round(time.Millisecond))

	idle, err := e.ddlRefresh(ctx, cfg, ddlCase{label: "no change"}, "ddl-refresh-idle")
	if err != nil {
		return nil, err
	}
	if idle.err != nil {
		return nil, idle.err
	}
	var runs []ddlRun
	for i, c := range ddlCases() {
		if err := e.execApp(ctx, c.stmt); err != nil {
			return nil, err
		}
		if err := e.waitCaughtUp(ctx); err != nil {
			return nil, err
		}
		r, err := e.ddlRefresh(ctx, cfg, c, fmt.Sprintf("ddl-refresh-%d", i+1))
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return ddlResults(e, full, idle, runs), nil
}

// ddlRefresh measures one Refresh after case c (the label "no change":
// none): its time and steps, its result, the source's rows read over it,
// the partial full backup's span, and, when c names a table, that table
// verified against the source afterwards. A failed refresh is the run's
// err, not the function's: the benchmark reports it.
func (e *scaleEnv) ddlRefresh(ctx context.Context, cfg *scaleConfig, c ddlCase, id string) (ddlRun, error) {
	r := ddlRun{c: c}
	before, err := e.sourceRowsRead(ctx)
	if err != nil {
		return r, err
	}
	r.run, r.res, r.err = e.measureRefresh(ctx, cfg, id)
	after, err := e.sourceRowsRead(ctx)
	if err != nil {
		return r, err
	}
	r.rowsRead = after - before
	fmt.Fprintf(os.Stderr, "ddl: refresh after %s: %s, source rows read %d, err %v\n", c.label, r.run.elapsed.Round(time.Millisecond), r.rowsRead, r.err)
	if r.err != nil {
		return r, nil
	}
	if r.res.Redump != nil {
		if r.redumpTook, err = e.workflowSpan(ctx, payload.RedumpWorkflowID(scaleSource)); err != nil {
			return r, err
		}
	}
	if c.table != "" && r.res.SnapshotID != "" {
		if r.verify, err = e.verifyTable(ctx, cfg, id+"-verify", "app."+c.table); err != nil {
			return r, err
		}
	}
	return r, nil
}

// execApp runs stmt on the source in schema app.
func (e *scaleEnv) execApp(ctx context.Context, stmt string) error {
	db, err := e.src.DB(ctx, "app")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("ddl: %s: %w", stmt, err)
	}
	return nil
}

// sourceRowsRead is the source's Rows_read (MariaDB's status counter of
// rows read from tables, temporary ones excluded; 10.11 has no
// Innodb_rows_read): every row any statement read so far.
func (e *scaleEnv) sourceRowsRead(ctx context.Context) (int64, error) {
	db, err := e.src.DB(ctx, "")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var name string
	var n int64
	if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Rows_read'").Scan(&name, &n); err != nil {
		return 0, fmt.Errorf("source Rows_read: %w", err)
	}
	return n, nil
}

// workflowSpan is the time from start to close of the latest run of
// workflow id.
func (e *scaleEnv) workflowSpan(ctx context.Context, id string) (time.Duration, error) {
	d, err := e.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return 0, fmt.Errorf("describe %s: %w", id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetCloseTime() == nil {
		return 0, fmt.Errorf("workflow %s has not closed", id)
	}
	return info.GetCloseTime().AsTime().Sub(info.GetStartTime().AsTime()), nil
}

// verifyTable runs Verify of table ("schema.table") of the current
// snapshot on cfg's queue and returns its verdict ("match", "mismatch: …").
func (e *scaleEnv) verifyTable(ctx context.Context, cfg *scaleConfig, id, table string) (string, error) {
	run, err := temporalclient.StartWorkflow(ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: cfg.queue},
		workflows.Verify, payload.VerifyInput{Source: scaleSource, Tables: []string{table}})
	if err != nil {
		return "", err
	}
	var res calls.VerifySnapshotResult
	if err := run.Get(ctx, &res); err != nil {
		return "", fmt.Errorf("verify %s: %w", table, err)
	}
	if len(res.Tables) != 1 {
		return "", fmt.Errorf("verify %s: %d verdicts", table, len(res.Tables))
	}
	v := res.Tables[0]
	out := v.Verdict
	if v.Reason != "" || v.Error != "" {
		out += ": " + strings.TrimSpace(v.Reason+" "+v.Error)
	}
	return out, nil
}

// sourceRows is the rows the refresh read from the source by its result: a
// re-dump's rows, every row when a full backup ran in its place, else 0;
// and what says so.
func (r ddlRun) sourceRows(all int64) (int64, string) {
	switch {
	case r.res.FullBackup != "":
		return all, "a full backup (" + r.res.FullBackup + ") ran in place of the refused refresh: " + strings.Join(r.res.Reasons, "; ")
	case r.res.Redump != nil:
		return r.res.Redump.Rows, fmt.Sprintf("RefreshResult.Redump: %s re-dumped (partial snapshot %s) in %.2f s",
			strings.Join(r.res.Redump.Tables, ", "), r.res.Redump.SnapshotID, r.redumpTook.Seconds())
	default:
		return 0, "RefreshResult: Redump none, FullBackup none"
	}
}

// decisions counts the refresh's table decisions by their first word
// ("link", "pair", "rewrite", …): "49 link, 1 rewrite".
func decisions(lines []string) string {
	n := map[string]int{}
	for _, l := range lines {
		_, reason, _ := strings.Cut(l, ": ")
		word, _, _ := strings.Cut(reason, " ")
		n[strings.TrimSuffix(word, ":")]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
	}
	return strings.Join(parts, ", ")
}

// decisionOf is the refresh's decision line of table ("app.t07: …").
func decisionOf(lines []string, table string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, table+": ") {
			return l
		}
	}
	return table + ": no decision"
}
