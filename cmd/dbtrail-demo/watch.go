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
)

// Block markers of the "what to look at" block; the smoke test looks for
// the first one.
const (
	blockTitle = "==================== dbtrail demo: what to look at ===================="
	blockEnd   = "========================================================================"
)

// newestQuery is the query of the newest changes that the block suggests.
const newestQuery = "SELECT seq, commit_ts, schema_name, table_name, op, pk, after_image FROM events ORDER BY seq DESC LIMIT 10"

// catchUpWarning is how long the demo waits for capture to catch up before
// it says so (it keeps waiting).
const catchUpWarning = 2 * time.Minute

// watcher follows capture: it prints the block once the index checkpoint
// has reached the source's position after the first transaction of the
// demo's traffic (so that the index has something to show), then a progress
// line every 10 seconds.
type watcher struct {
	idx, src   *sql.DB
	target     binlogpos.Position // source position after the first demo transaction
	prevHead   binlogpos.Position // source position at the previous progress line
	traffic    *traffic
	bin        string   // dbtrail binary
	env        []string // environment of the dbtrail processes
	files      clientFiles
	envFile    string
	cfg        config
	sourceAddr string
	indexAddr  string
}

// loop runs until ctx is done (nil) or capture ends by itself (an error).
func (w *watcher) loop(ctx context.Context, capture *child) error {
	poll := time.NewTicker(500 * time.Millisecond)
	defer poll.Stop()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	start := time.Now()
	caughtUp, warned := false, false
	var lastErr string
	var lastErrAt time.Time
	var lastEvents int64 = -1
	for {
		select {
		case <-ctx.Done():
			if !caughtUp {
				say("capture had not caught up with the source when the demo stopped")
			}
			return nil
		case <-capture.done:
			how := "with status 0"
			if capture.err != nil {
				how = "(" + capture.err.Error() + ")"
			}
			return fmt.Errorf("%s exited unexpectedly %s; its log is above, prefixed [%s]", capture.name, how, capture.name)
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
				w.printBlock(ctx)
			} else if !warned && time.Since(start) > catchUpWarning {
				warned = true
				say("capture has not caught up after %s; see its log above, prefixed [%s]", catchUpWarning, capture.name)
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
	if err := w.idx.QueryRowContext(ctx, "SELECT COUNT(*) FROM events WHERE source = ?", sourceName).Scan(&n); err != nil {
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

// printBlock prints what to look at, with the output of `dbtrail status`.
func (w *watcher) printBlock(ctx context.Context) {
	metrics := "http://" + w.cfg.metricsAddr + "/metrics"
	metricsNote := ""
	if err := checkMetrics(ctx, metrics); err != nil {
		metricsNote = "   (not answering right now: " + err.Error() + ")\n"
	}
	status, err := output(ctx, w.bin, w.env, "status", "--source", sourceName)
	if err != nil {
		status += "(failed: " + err.Error() + ")\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", blockTitle)
	fmt.Fprintf(&b, " dbtrail capture is reading the binlog of the source (%s) into the index (%s);\n", w.sourceAddr, w.indexAddr)
	fmt.Fprintf(&b, " the demo changes the sample database shop at %d transactions/s.\n\n", w.cfg.tps)
	fmt.Fprintf(&b, " Prometheus metrics of capture:\n   %s\n   curl -s %s | grep '^dbtrail_'\n%s\n", metrics, metrics, metricsNote)
	fmt.Fprintf(&b, " Capture status (in another terminal, from this folder):\n   set -a; . %s; set +a; %s status\n", display(w.envFile), display(w.bin))
	fmt.Fprintf(&b, "   It says now:\n")
	for _, line := range strings.Split(strings.TrimRight(status, "\n"), "\n") {
		fmt.Fprintf(&b, "   | %s\n", line)
	}
	fmt.Fprintf(&b, "\n The newest changes in the index:\n   mariadb --defaults-extra-file=%s %s -e \"%s\"\n\n",
		display(w.files.Index), "dbtrail", newestQuery)
	fmt.Fprintf(&b, " Make a change of your own on the source and find it with the query above:\n   mariadb --defaults-extra-file=%s shop -e \"UPDATE products SET price = price + 1 WHERE sku = 'SKU-001'\"\n\n",
		display(w.files.Source))
	fmt.Fprintf(&b, " The passwords are only in %s, %s and %s (mode 0600).\n",
		display(w.envFile), display(w.files.Index), display(w.files.Source))
	fmt.Fprintf(&b, " Ctrl-C stops the traffic, capture and both servers; their data stays in %s\n and the next run carries on from there.\n", display(filepath.Dir(w.envFile)))
	fmt.Fprintf(&b, "%s\n\n", blockEnd)
	fmt.Print(b.String())
}

// checkMetrics gets url and wants status 200.
func checkMetrics(ctx context.Context, url string) error {
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
