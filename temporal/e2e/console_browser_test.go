package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// screenshotsEnv names a folder the console's browser test saves its
// screenshots in (default: a folder of the test's temporary folder, named
// in the log).
const screenshotsEnv = "DBTRAIL_SCREENSHOTS"

// browserRun is one headless Chromium tab with its console's errors
// collected.
type browserRun struct {
	t    *testing.T
	ctx  context.Context
	dir  string
	mu   sync.Mutex
	errs []string
}

// newBrowser starts headless Chromium (testsuite.Chromium: missing, the
// test fails under CI) and collects every console error and uncaught
// exception of its pages.
func newBrowser(t *testing.T, parent context.Context) *browserRun {
	t.Helper()
	path := testsuite.Chromium(t)
	actx, cancel := chromedp.NewExecAllocator(parent, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1366, 900),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "chromium")))...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	b := &browserRun{t: t, ctx: ctx, dir: os.Getenv(screenshotsEnv)}
	if b.dir == "" {
		b.dir = filepath.Join(t.TempDir(), "screenshots")
	}
	must(t, os.MkdirAll(b.dir, 0o755))
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errs = append(b.errs, m.String()+" at "+m.URL)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// do runs actions, failing the test on an error.
func (b *browserRun) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser, %s: %v", what, err)
	}
}

// text is the text of the element sel.
func (b *browserRun) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("browser, text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// count is the number of elements sel matches now.
func (b *browserRun) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Nodes(sel, chromedp.AtLeast(0)))
	must(b.t, err)
	return len(n)
}

// shot saves the page as name.png.
func (b *browserRun) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	must(b.t, err)
	must(b.t, os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644))
}

// noErrors fails the test on any console error of the pages so far.
func (b *browserRun) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errs) > 0 {
		b.t.Fatalf("the console's pages wrote errors: %q", b.errs)
	}
}

// TestConsoleBrowser drives headless Chromium through the console of
// `dbtrail dev` (the binary: its own embedded Temporal, worker and
// schedules; capture is the test's) on the real servers: after a backup
// started through the API, a login with the read-write token shows the overview
// with the capture state, a lag plot with points and the backup's snapshot; the snapshot's detail
// lists its tables; the backup job's page shows it completed; a table's
// first rows show a value holding markup as text; a row's history (GET
// /v1/history on the real index) shows its insert and its update with the
// changed column marked; a query answers with its cut; after a logout a read-only login sees no cancel button. No page
// writes a console error. Screenshots: $DBTRAIL_SCREENSHOTS.
func TestConsoleBrowser(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	b := newBrowser(t, e.ctx)
	e.execAll(t, "CREATE TABLE acct (id INT PRIMARY KEY, note VARCHAR(64))",
		"INSERT INTO acct VALUES (1, '<script>alert(1)</script>'), (2, 'plain')")
	e.waitCaughtUp(t)

	const rw = "rw-console-e2e-secret-0123456789"
	const ro = "ro-console-e2e-secret-0123456789"
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	must(t, os.WriteFile(tokenFile, []byte("rw "+rw+" ops\nro "+ro+" viewer\n"), 0o600))
	exportDir := filepath.Join(t.TempDir(), "exports")
	must(t, os.MkdirAll(exportDir, 0o700))
	tsrv := testsuite.StartTarget(t, 43) // consoleRestore's
	e.namedTarget(t, "console_copy", tsrv)
	c := startDevProc(t, e, bin, rw, "--token-file", tokenFile, "--export-dir", exportDir, "--restore-targets", e.targetsFile(t))
	var started jobs.Job
	if st := c.call("POST", "/v1/backups", `{"label": "console-1"}`, &started); st != 202 {
		t.Fatalf("POST /v1/backups: %d", st)
	}
	done := c.waitJob(started.ID)
	var res workflows.FullBackupResult
	if done.State != jobs.Completed || json.Unmarshal(done.Result, &res) != nil || res.SnapshotID == "" {
		t.Fatalf("backup: %+v", done)
	}
	var snaps []api.SnapshotEntry
	if st := c.call("GET", "/v1/snapshots", "", &snaps); st != 200 || len(snaps) == 0 {
		t.Fatalf("GET /v1/snapshots: %d %v", st, snaps)
	}
	e.exec(t, "UPDATE acct SET note = 'changed <b>' WHERE id = 2")
	e.waitCaughtUp(t)
	var hist api.History
	if st := c.call("GET", "/v1/history?table=app.acct&key=2", "", &hist); st != 200 || len(hist.Versions) != 2 ||
		hist.Versions[0].Op != "insert" || hist.Versions[1].Op != "update" {
		t.Fatalf("GET /v1/history: %d %+v", st, hist)
	}

	// dev keeps its schedules: the overview shows the verify schedule's
	// next start (GET /v1/schedules on dev's Temporal).
	var scheds []jobs.ScheduleState
	verifyNext := false
	st := c.call("GET", "/v1/schedules", "", &scheds)
	for _, s := range scheds {
		verifyNext = verifyNext || s.Name == "verify" && s.NextAt != nil
	}
	if st != 200 || !verifyNext {
		t.Fatalf("GET /v1/schedules: %d %+v", st, scheds)
	}

	b.do("log in", chromedp.Navigate(c.url+"/"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", rw), chromedp.Submit("#token"), chromedp.WaitVisible("#newest-snapshot"))
	if got := b.text("#newest-snapshot"); got != res.SnapshotID {
		t.Fatalf("overview: newest snapshot %q, want %s", got, res.SnapshotID)
	}
	if lag := b.text("#lag"); lag == "" || strings.Contains(lag, "no commit") {
		t.Fatalf("overview: capture lag %q", lag)
	}
	if n := b.count("#lag-plot circle"); n < 1 {
		t.Fatalf("overview: the lag plot has %d points", n)
	}
	if row := b.text("#sched-verify"); !strings.Contains(row, "24h0m0s") || !strings.Contains(row, "(in ") {
		t.Fatalf("overview: the verify schedule %q", row)
	}
	if w := b.text("#index-window"); w == "" || strings.Contains(w, "empty") {
		t.Fatalf("overview: the index window %q", w)
	}
	b.do("the overview's live update", chromedp.Poll[chromedp.Void](`document.getElementById("live-at").textContent.indexOf("updated") >= 0`,
		chromedp.WithPollingTimeout(time.Minute)))
	if live := b.text("#live-at"); !strings.Contains(live, "updated") {
		t.Fatalf("overview: the live update %q", live)
	}
	if n := b.count("#lag-plot circle"); n < 1 {
		t.Fatalf("overview: after the live update the lag plot has %d points", n)
	}
	b.shot("overview")

	b.do("open the snapshot", chromedp.Click("#newest-snapshot"), chromedp.WaitVisible("#snapshot-id"))
	if got := b.text("#snapshot-id"); !strings.HasPrefix(got, res.SnapshotID) {
		t.Fatalf("snapshot page: %q", got)
	}
	if tables := b.text("table"); !strings.Contains(tables, "app.acct") {
		t.Fatalf("snapshot page: no app.acct in %q", tables)
	}
	if n := b.count(`a#manifest[href="/backups/` + res.SnapshotID + `/manifest"]`); n != 1 {
		t.Fatalf("snapshot page: %d manifest links", n)
	}
	var manifest map[string]any
	if st := c.call("GET", "/v1/snapshots/"+res.SnapshotID+"/manifest", "", &manifest); st != 200 || manifest["snapshot_id"] != res.SnapshotID {
		t.Fatalf("GET the manifest: %d %v", st, manifest)
	}
	if sum := b.text("details.files summary"); !strings.Contains(sum, "app.acct") {
		t.Fatalf("snapshot page: the files of %q", sum)
	}
	if n := b.count("details.files code[title]"); n < 1 {
		t.Fatalf("snapshot page: %d files with a sha256", n)
	}
	b.shot("snapshot")
	b.do("check app.acct's files on disk", chromedp.Navigate(c.url+"/backups/"+res.SnapshotID+"?check=app.acct"), chromedp.WaitVisible("td.check"))
	if ok, all := b.count("details.files[open] td.check-ok"), b.count("td.check"); ok < 1 || ok != all {
		t.Fatalf("snapshot page: %d of %d files of app.acct check ok on disk", ok, all)
	}

	b.do("open the jobs", chromedp.Navigate(c.url+"/jobs?kind=backup"), chromedp.WaitVisible(`a[href="/jobs/`+started.ID+`"]`),
		chromedp.Click(`a[href="/jobs/`+started.ID+`"]`), chromedp.WaitVisible("#job-state"))
	if id, state := b.text("#job-id"), b.text("#job-state"); id != started.ID || state != string(jobs.Completed) {
		t.Fatalf("job page: %s %s", id, state)
	}
	if result := b.text("#job-result"); !strings.Contains(result, res.SnapshotID) {
		t.Fatalf("job page: result %q", result)
	}
	b.shot("job")

	b.do("a table's first rows", chromedp.Navigate(c.url+"/moment?snapshot="+res.SnapshotID+"&table=app.acct"), chromedp.WaitVisible("table.rows"))
	if rows := b.text("table.rows"); !strings.Contains(rows, "<script>alert(1)</script>") || !strings.Contains(rows, "plain") {
		t.Fatalf("first rows: %q", rows)
	}
	if n := b.count(`form[action="/moment/confirm"]`); n != 2 {
		t.Fatalf("moment page, read-write: %d start forms, want 2", n)
	}
	b.shot("moment")

	b.do("a row's history", chromedp.SetValue("#h-key", "2"), chromedp.Submit("#h-key"), chromedp.WaitVisible("table.history"))
	if rows := b.text("table.history tbody"); !strings.Contains(rows, "insert") || !strings.Contains(rows, "update") ||
		!strings.Contains(rows, hist.Versions[1].GTID) {
		t.Fatalf("history: %q", rows)
	}
	if marked := b.text("table.history tbody tr:nth-child(2) mark"); marked != `note = "changed <b>"` {
		t.Fatalf("history: the update's changed column %q", marked)
	}
	b.shot("history")

	// A moment between snapshots: the tables then and a table's rows then
	// (the snapshot's row changed after it), read through the API at it.
	at := "gtid:" + hist.Versions[1].GTID
	b.do("the tables at a moment", chromedp.Navigate(c.url+"/moment?at="+at), chromedp.WaitVisible("#moment-cut"),
		chromedp.Click(`ul.tables a.tname`), chromedp.WaitVisible("table.rows"))
	if rows := b.text("table.rows"); !strings.Contains(rows, "changed <b>") || strings.Contains(rows, "plain") {
		t.Fatalf("first rows at %s: %q", at, rows)
	}
	if cut := b.text("#moment-cut"); !strings.Contains(cut, hist.Versions[1].GTID) {
		t.Fatalf("the cut at %s: %q", at, cut)
	}
	b.shot("moment-at")

	b.do("a query", chromedp.Navigate(c.url+"/query"), chromedp.WaitVisible("#q-sql"),
		chromedp.SendKeys("#q-sql", "SELECT count(*) AS n FROM app.acct"), chromedp.Submit("#q-sql"), chromedp.WaitVisible("#cut"))
	if rows := b.text("table.rows tbody"); rows != "2" {
		t.Fatalf("query: rows %q", rows)
	}
	b.shot("query")

	consoleRestore(t, e, b, c.url, res.SnapshotID, tsrv)
	consoleCancelExport(t, e, b, c.url, exportDir)

	b.do("log out, log in read-only", chromedp.Click("header button"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", ro), chromedp.Submit("#token"), chromedp.WaitVisible("#newest-snapshot"),
		chromedp.Navigate(c.url+"/jobs/"+started.ID), chromedp.WaitVisible("#job-state"))
	if who := b.text("header .who"); !strings.Contains(who, "viewer") || !strings.Contains(who, "read-only") {
		t.Fatalf("read-only session: %q", who)
	}
	b.do("the moment, read-only", chromedp.Navigate(c.url+"/moment?snapshot="+res.SnapshotID), chromedp.WaitVisible("#m-at"))
	if n := b.count(`form[action="/moment/confirm"]`); n != 0 {
		t.Fatalf("moment page, read-only: %d start forms", n)
	}
	b.do("the jobs, read-only", chromedp.Navigate(c.url+"/jobs"), chromedp.WaitVisible("table.jobs"))
	if n := b.count(`form[action$="/cancel"]`); n != 0 {
		t.Fatalf("jobs page, read-only: %d cancel forms", n)
	}
	b.noErrors()
	t.Logf("screenshots in %s", b.dir)
}

// consoleRestore restores app.acct at the latest moment into a new schema
// of tsrv, restore target console_copy (a real server the worker knows by
// name), from the
// moment page: the coverage chart is drawn and a click on it picks a
// time; the confirmation names the table written; the job's page follows
// the run live until it completes with each table's verification, and the
// target holds the source's rows.
func consoleRestore(t *testing.T, e *backupEnv, b *browserRun, url, snapshotID string, tsrv *testsuite.Server) {
	t.Helper()
	b.do("the moment's coverage", chromedp.Navigate(url+"/moment?snapshot="+snapshotID+"&table=app.acct"), chromedp.WaitVisible("#coverage"))
	if ans, snaps := b.count("#coverage rect.answerable"), b.count("#coverage rect.snap"); ans < 1 || snaps < 1 {
		t.Fatalf("coverage: %d answerable hours, %d snapshots", ans, snaps)
	}
	b.do("pick a time on the coverage", chromedp.Click("#coverage svg"), chromedp.WaitVisible("#picked"))
	picked, err := chromedp.Run(b.ctx, chromedp.Value("#r-at"))
	must(t, err)
	if _, err := time.Parse("2006-01-02 15:04:05", picked); err != nil {
		t.Fatalf("the picked moment %q: %v", picked, err)
	}
	b.do("pick a snapshot's cut on the coverage", chromedp.Click("#coverage rect.snap"), chromedp.WaitVisible("#picked"))
	cut, err := chromedp.Run(b.ctx, chromedp.Value("#r-at"))
	must(t, err)
	if !strings.HasPrefix(cut, "gtid:") && !strings.HasPrefix(cut, "pos:") {
		t.Fatalf("a snapshot's tick picked %q, want its cut (gtid: or pos:)", cut)
	}
	b.do("review a restore", chromedp.SetValue("#r-at", "latest"), chromedp.SetValue("#r-target", "console_copy"),
		chromedp.SetValue("#r-into", "acct_restored"), chromedp.SetValue("#r-tables", "app.acct"), chromedp.Submit("#r-target"),
		chromedp.WaitVisible("#writes"))
	if w := b.text("#writes tbody"); !strings.Contains(w, "restore target console_copy, table acct_restored.acct") {
		t.Fatalf("the restore's confirmation: %q", w)
	}
	b.shot("confirm")
	b.do("start the restore and follow it", chromedp.Click("#start"), chromedp.WaitVisible("#job-state"),
		chromedp.WaitVisible("#job-state:not(.state-running)"))
	if st := b.text("#job-state"); st != string(jobs.Completed) {
		t.Fatalf("the restore ended %s: %s", st, b.text("main"))
	}
	if v := b.text("#restored tbody"); !strings.Contains(v, "app.acct") || !strings.Contains(v, "verified, fingerprint") {
		t.Fatalf("the restore's verification: %q", v)
	}
	b.shot("restore")
	db, err := tsrv.DB(e.ctx, "acct_restored")
	must(t, err)
	defer db.Close()
	var notes []string
	rows, err := db.QueryContext(e.ctx, "SELECT note FROM acct ORDER BY id")
	must(t, err)
	for rows.Next() {
		var n string
		must(t, rows.Scan(&n))
		notes = append(notes, n)
	}
	must(t, rows.Err())
	if strings.Join(notes, "|") != "<script>alert(1)</script>|changed <b>" {
		t.Fatalf("the restored rows: %q", notes)
	}
}

// consoleCancelExport starts an export from the moment page while the
// index's event tables are locked (its plan waits for them), cancels it
// from its job page and sees the page turn to canceled by itself; nothing
// is written where the export was to go.
func consoleCancelExport(t *testing.T, e *backupEnv, b *browserRun, url, exportDir string) {
	t.Helper()
	b.do("review an export", chromedp.Navigate(url+"/moment?table=app.acct"), chromedp.WaitVisible("#e-out"),
		chromedp.SetValue("#e-at", "latest"), chromedp.SetValue("#e-out", "console-export.sql"), chromedp.Submit("#e-out"),
		chromedp.WaitVisible("#writes"))
	if w := b.text("#writes tbody"); !strings.Contains(w, filepath.Join(exportDir, "console-export.sql")) {
		t.Fatalf("the export's confirmation: %q", w)
	}
	conn, err := e.store.DB().Conn(e.ctx)
	must(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(e.ctx, "LOCK TABLES event_chunks WRITE, checkpoints WRITE, schema_history WRITE, capture_starts WRITE")
	must(t, err)
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			_, err := conn.ExecContext(context.Background(), "UNLOCK TABLES")
			must(t, err)
		}
	}
	defer unlock()
	b.do("start the export", chromedp.Click("#start"), chromedp.WaitVisible("#cancel"))
	b.shot("export-running")
	b.do("cancel the export", chromedp.Click("#cancel"), chromedp.WaitVisible(".notice"),
		chromedp.WaitVisible("#job-state:not(.state-running)"))
	unlock()
	if st := b.text("#job-state"); st != string(jobs.Canceled) {
		t.Fatalf("the canceled export ended %s: %s", st, b.text("main"))
	}
	b.shot("export-canceled")
	if _, err := os.Stat(filepath.Join(exportDir, "console-export.sql")); !os.IsNotExist(err) {
		t.Fatalf("a canceled export left its file: %v", err)
	}
}

// startDevProc runs `dbtrail dev` (the binary) over e's source, index and
// backup folder, capture left to e, its refresh schedule a day away (the
// test starts its backups), the API on a free loopback port; extra are
// more flags. It returns once the API answers, a client of it with token.
func startDevProc(t *testing.T, e *backupEnv, bin, token string, extra ...string) apiClient {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(e.ctx)
	args := append([]string{"dev", "--data-dir", filepath.Join(t.TempDir(), "dev"), "--backup-dir", e.acts.BackupDir, "--capture=false",
		"--frontend-addr", freeAddr(t), "--ui-addr", "", "--metrics-addr", "", "--sql-addr", "", "--api-addr", addr,
		"--refresh-every", "24h", "--query-memory-limit", "256MB"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN, "DBTRAIL_SOURCE_DSN="+e.source.DSN(""), "DBTRAIL_API_TOKENS=")
	runUntil(t, cmd, cancel, "dbtrail dev is running")
	c := apiClient{t: t, url: "http://" + addr, token: token}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(c.url + "/v1/health"); err == nil {
			resp.Body.Close()
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("dbtrail dev's API at %s did not answer in 2 minutes", addr)
		}
	}
}
