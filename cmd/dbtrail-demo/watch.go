package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/sqlport"
)

// Block markers of the "what to look at" block; the smoke test looks for
// the first one.
const (
	blockTitle = "==================== dbtrail demo: what to look at ===================="
	blockEnd   = "========================================================================"
)

// newestQuery is the query of the newest changes that the block suggests:
// the events view, which rebuilds each image as a JSON object from its
// chunk's column names (it unpacks every chunk: fine for the demo's index).
const newestQuery = "SELECT seq, commit_ts, schema_name, table_name, op, pk, after_image " +
	"FROM events ORDER BY seq DESC LIMIT 10"

// catchUpWarning is how long the demo waits for capture to catch up before
// it says so (it keeps waiting).
const catchUpWarning = 2 * time.Minute

// watcher follows capture: once the index checkpoint has reached the
// source's position after the first transaction of the demo's traffic (so
// that the index has something to show) it takes a full backup, then prints
// the block; and a progress line every 10 seconds.
type watcher struct {
	idx, src   *sql.DB
	target     binlogpos.Position // source position after the first demo transaction
	prevHead   binlogpos.Position // source position at the previous progress line
	traffic    *traffic
	bin        string   // dbtrail binary
	env        []string // environment of the dbtrail processes
	files      clientFiles
	envFile    string
	backupDir  string // --backup-dir of dev and views (absolute)
	cfg        config
	sourceAddr string
	indexAddr  string
	tokenFile  string // dev's API token file (absolute)
}

// loop runs until trafficCtx is done (nil; at the end of --duration a
// running backup is waited for first), ctx is done (nil) or dev ends by
// itself (an error).
func (w *watcher) loop(ctx, trafficCtx context.Context, dev *child) error {
	poll := time.NewTicker(500 * time.Millisecond)
	defer poll.Stop()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	start := time.Now()
	caughtUp, warned := false, false
	var lastErr string
	var lastErrAt time.Time
	var lastEvents int64 = -1

	backupCtx, cancelBackup := context.WithCancel(ctx)
	var backupDone chan backupResult // nil unless a backup runs
	defer func() {
		cancelBackup()
		if backupDone != nil {
			<-backupDone
		}
	}()
	end := trafficCtx.Done()
	for {
		select {
		case <-end:
			if ctx.Err() == nil && backupDone != nil {
				say("--duration %s is over; the traffic stops, the demo waits for the full backup to finish", w.cfg.duration)
				end = nil
				continue
			}
			if !caughtUp {
				say("capture had not caught up with the source when the demo stopped")
			}
			return nil
		case <-ctx.Done():
			return nil
		case <-dev.done:
			return fmt.Errorf("%s exited unexpectedly (%s); its log is above, prefixed [%s]", dev.name, exitText(dev.err), dev.name)
		case r := <-backupDone:
			backupDone = nil
			w.printBlock(ctx, r)
			if end == nil {
				return nil
			}
		case <-progress.C:
			w.progress(ctx, &lastEvents)
		case <-poll.C:
			if caughtUp {
				continue
			}
			ok, err := w.caughtUp(ctx)
			if err != nil && ctx.Err() == nil && (err.Error() != lastErr || time.Since(lastErrAt) > 10*time.Second) {
				lastErr, lastErrAt = err.Error(), time.Now()
				say("checking capture progress: %v", err)
			}
			if ok {
				caughtUp = true
				w.prevHead = w.target
				say("capture caught up with the source in %s", time.Since(start).Round(100*time.Millisecond))
				ch := make(chan backupResult, 1)
				backupDone = ch
				go func() { ch <- w.takeBackup(backupCtx) }()
			} else if !warned && time.Since(start) > catchUpWarning {
				warned = true
				say("capture has not caught up after %s; see the log of dbtrail dev above, prefixed [%s]", catchUpWarning, dev.name)
			}
		}
	}
}

// checkpoint reads the index checkpoint of the demo's source.
func (w *watcher) checkpoint(ctx context.Context) (binlogpos.Position, bool, error) {
	var p binlogpos.Position
	err := w.idx.QueryRowContext(ctx, "SELECT binlog_file, binlog_pos FROM checkpoints WHERE source = ?", sourceName).Scan(&p.File, &p.Pos)
	if err == sql.ErrNoRows {
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("read checkpoint from index %s: %w", w.indexAddr, err)
	}
	return p, true, nil
}

// caughtUp reports whether the checkpoint has reached w.target, which it
// sets once the traffic has committed a transaction.
func (w *watcher) caughtUp(ctx context.Context) (bool, error) {
	if w.target.IsZero() {
		if w.traffic.sent.Load() == 0 {
			return false, nil
		}
		head, err := masterPos(ctx, w.src)
		if err != nil {
			return false, err
		}
		w.target = head
	}
	cp, ok, err := w.checkpoint(ctx)
	if err != nil || !ok {
		return false, err
	}
	c, err := binlogpos.Compare(cp, w.target)
	if err != nil {
		return false, fmt.Errorf("compare checkpoint %s with source position %s: %w", cp, w.target, err)
	}
	return c >= 0, nil
}

// progress prints one line: events indexed, the checkpoint and whether it
// is at the source's current position, and the traffic sent.
func (w *watcher) progress(ctx context.Context, last *int64) {
	var n int64
	if err := w.idx.QueryRowContext(ctx, "SELECT COALESCE(SUM(n), 0) FROM event_chunks WHERE source = ?", sourceName).Scan(&n); err != nil {
		if ctx.Err() == nil {
			say("progress: count events in index %s: %v", w.indexAddr, err)
		}
		return
	}
	delta := ""
	if *last >= 0 {
		delta = fmt.Sprintf(" (+%d in 10s)", n-*last)
	}
	*last = n
	state := "no checkpoint yet"
	if cp, ok, err := w.checkpoint(ctx); err == nil && ok {
		state = "checkpoint " + cp.String()
		head, err := masterPos(ctx, w.src)
		atHead, _ := binlogpos.Compare(cp, head)
		keepingUp, _ := binlogpos.Compare(cp, w.prevHead)
		switch {
		case err != nil:
		case atHead >= 0:
			state += ", at the source's head"
		case !w.prevHead.IsZero() && keepingUp >= 0:
			state += ", keeping up (all the source wrote 10s ago is indexed)"
		default:
			state += ", behind the source (at " + head.String() + ")"
		}
		w.prevHead = head
	}
	say("%s  %d events indexed%s, %s; traffic %d tx sent, %d failed",
		time.Now().Format("15:04:05"), n, delta, state, w.traffic.sent.Load(), w.traffic.failed.Load())
}

// uiURL is the Temporal web UI's list of workflows.
func (w *watcher) uiURL() string {
	return "http://" + w.cfg.uiAddr + "/namespaces/default/workflows"
}

// printBlock prints what to look at, with the outcome of the backup r and
// the output of `dbtrail status`.
func (w *watcher) printBlock(ctx context.Context, r backupResult) {
	metrics := "http://" + w.cfg.metricsAddr + "/metrics"
	ui := w.uiURL()
	status, err := output(ctx, w.bin, w.env, "status", "--source", sourceName)
	if err != nil {
		status += "(failed: " + err.Error() + ")\n"
	}
	srcDir := filepath.Join(w.backupDir, sourceName)
	current := filepath.Join(srcDir, "current")
	viewsFile := filepath.Join(srcDir, "views.sql")

	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", blockTitle)
	fmt.Fprintf(&b, " dbtrail dev runs capture of the source (%s) into the index (%s), an embedded\n", w.sourceAddr, w.indexAddr)
	fmt.Fprintf(&b, " Temporal server and a worker; the demo changes the sample database shop at %d transactions/s.\n\n", w.cfg.tps)
	fmt.Fprintf(&b, " Temporal web UI (the FullBackup workflow, its history and progress):\n   %s\n%s\n", ui, notAnswering(ctx, ui))

	if r.err == nil {
		fmt.Fprintf(&b, " The full backup took %s:\n", r.took.Round(100*time.Millisecond))
		for _, line := range strings.Split(r.summary, "\n") {
			fmt.Fprintf(&b, "   | %s\n", line)
		}
	} else {
		fmt.Fprintf(&b, " The full backup FAILED: %v\n", r.err)
	}
	if fileExists(filepath.Join(current, "manifest.json")) {
		earlier := ""
		if r.err != nil {
			earlier = ", from an earlier backup"
		}
		fmt.Fprintf(&b, " Snapshot folder (Parquet files and manifest.json%s):\n   %s\n", earlier, display(current))
	}
	w.writeQuery(&b, r, viewsFile)
	w.writeRestore(&b, r)
	w.writeAPI(&b, r)
	fmt.Fprintf(&b, " The console in the browser (docs/console.md): http://%s/ (log in with a token of %s)\n", w.cfg.apiAddr, w.tokenFile)
	b.WriteString("\n")
	temporalAddr := ""
	if w.cfg.frontendAddr != defaultFrontendAddr {
		temporalAddr = " --temporal-addr " + w.cfg.frontendAddr
	}
	fmt.Fprintf(&b, " Take another backup by hand (in another terminal, from this folder, while the demo runs):\n")
	fmt.Fprintf(&b, "   set -a; . %s; set +a; %s backup full%s\n", display(w.envFile), display(w.bin), temporalAddr)
	fmt.Fprintf(&b, " A Refresh runs every minute (schedule refresh-%s in the UI): it folds the index's changes\n", sourceName)
	fmt.Fprintf(&b, " into a new snapshot without reading the source. Run one now, and list the snapshots:\n")
	fmt.Fprintf(&b, "   set -a; . %s; set +a; %s refresh%s\n", display(w.envFile), display(w.bin), temporalAddr)
	fmt.Fprintf(&b, "   %s snapshots --backup-dir %s\n\n", display(w.bin), display(w.backupDir))

	if line, err := sqlport.ClientLine(w.cfg.sqlAddr, w.tokenFile); err == nil {
		fmt.Fprintf(&b, " Read any moment with a MySQL client (the time-travel SQL port; the user and password are dev's token):\n")
		fmt.Fprintf(&b, "   %s -e \"SET @@dbtrail_at = '%s'; SELECT @@dbtrail_cut; SELECT count(*) FROM shop.orders\"\n\n",
			line, time.Now().UTC().Add(-time.Minute).Format("2006-01-02 15:04:05"))
	}
	fmt.Fprintf(&b, " Prometheus metrics of capture:\n   %s\n   curl -s %s | grep '^dbtrail_'\n%s\n", metrics, metrics, notAnswering(ctx, metrics))
	fmt.Fprintf(&b, " Capture status (in another terminal, from this folder):\n   set -a; . %s; set +a; %s status\n", display(w.envFile), display(w.bin))
	fmt.Fprintf(&b, "   It says now:\n")
	for _, line := range strings.Split(strings.TrimRight(status, "\n"), "\n") {
		fmt.Fprintf(&b, "   | %s\n", line)
	}
	fmt.Fprintf(&b, "\n The newest changes in the index:\n   mariadb --defaults-extra-file=%s %s -e \"%s\"\n\n",
		display(w.files.Index), "dbtrail", strings.ReplaceAll(newestQuery, "$", `\$`)) // inside "", the shell would expand $[...]
	fmt.Fprintf(&b, " Make a change of your own on the source and find it with the query above:\n   mariadb --defaults-extra-file=%s shop -e \"UPDATE products SET price = price + 1 WHERE sku = 'SKU-001'\"\n\n",
		display(w.files.Source))
	fmt.Fprintf(&b, " The passwords are only in %s, %s and %s (mode 0600).\n",
		display(w.envFile), display(w.files.Index), display(w.files.Source))
	fmt.Fprintf(&b, " Ctrl-C stops the traffic, dbtrail dev and both servers; their data, the backups and\n Temporal's history stay in %s and the next run carries on from there.\n", display(filepath.Dir(w.envFile)))
	fmt.Fprintf(&b, "%s\n\n", blockEnd)
	fmt.Print(b.String())
}

// writeQuery writes the block's part on querying the snapshot: the example
// `dbtrail query` with what it printed, the interactive shell, and
// views.sql for a DuckDB CLI.
func (w *watcher) writeQuery(b *strings.Builder, r backupResult, viewsFile string) {
	fmt.Fprintf(b, " Query the snapshot with the DuckDB built into dbtrail (one typed view per table, schema.table):\n")
	writeExample(b, w.queryCommand(), r.query, r.queryErr)
	fmt.Fprintf(b, "   %s query --backup-dir %s\n", display(w.bin), display(w.backupDir))
	fmt.Fprintf(b, "   is an interactive shell: statements end with ';', .tables, .schema shop.orders, .quit;\n")
	fmt.Fprintf(b, "   --format csv or json, --snapshot ID for an older snapshot.\n")
	if fileExists(viewsFile) {
		fmt.Fprintf(b, " The worker keeps the same views in %s for a DuckDB CLI (duckdb -init %s).\n",
			display(viewsFile), display(viewsFile))
	}
}

// writeExample writes an example command of the block, whether it failed
// just now, and what it printed, each line after "   | ".
func writeExample(b *strings.Builder, command, printed string, err error) {
	fmt.Fprintf(b, "   %s\n", command)
	if err != nil {
		fmt.Fprintf(b, "   (it FAILED just now: %v)\n", err)
	}
	for _, line := range strings.Split(strings.TrimRight(printed, "\n"), "\n") {
		if line != "" {
			fmt.Fprintf(b, "   | %s\n", line)
		}
	}
}

// notAnswering is "" when url answers with status 200, otherwise a line of
// the block saying it does not.
func notAnswering(ctx context.Context, url string) string {
	if err := checkHTTP(ctx, url); err != nil {
		return "   (not answering right now: " + err.Error() + ")\n"
	}
	return ""
}

// checkHTTP gets url and wants status 200.
func checkHTTP(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// fileExists reports whether path (followed through symlinks) is a file.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// display returns path relative to the working directory when it lies
// under it ("bin/dbtrail", ".dbtrail/demo/env"), otherwise as it is.
func display(path string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	if !strings.ContainsRune(rel, filepath.Separator) {
		rel = "." + string(filepath.Separator) + rel
	}
	return rel
}

// masterPos returns the source's current binlog position.
func masterPos(ctx context.Context, src *sql.DB) (binlogpos.Position, error) {
	rows, err := src.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS on source: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS on source: %w", err)
	}
	if !rows.Next() {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS on source: no row (binary log off?)")
	}
	var p binlogpos.Position
	vals := []any{&p.File, &p.Pos}
	for len(vals) < len(cols) {
		vals = append(vals, new(sql.RawBytes))
	}
	if err := rows.Scan(vals...); err != nil {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS on source: %w", err)
	}
	return p, rows.Err()
}
