package e2e

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

var recordHistories = flag.Bool("record", false, "TestRecordHistories: record this release's workflow histories under "+historiesDir)

// historyRelease names the folder a recording writes: DBTRAIL_HISTORY_RELEASE,
// else today's UTC date.
func historyRelease() string {
	if r := os.Getenv("DBTRAIL_HISTORY_RELEASE"); r != "" {
		return r
	}
	return time.Now().UTC().Format("2006-01-02")
}

// TestRecordHistories runs every workflow a worker registers, on its
// paths, end to end on the embedded server (small tables, an S3 server the
// worker archives and uploads to) and stores each closed workflow's history
// as JSON under testdata/histories/<release>/, for TestReplayStoredHistories
// to replay in every later build (TestEveryWorkflowHasAStoredHistory
// requires one of each workflow). It runs only when asked:
//
//	DBTRAIL_RECORD_HISTORIES=1 go test -count=1 -run TestRecordHistories ./temporal/e2e/
//	go test -count=1 -run TestRecordHistories ./temporal/e2e/ -args -record
//
// It refuses to write into a release folder that exists: stored histories
// are never rewritten (DBTRAIL_HISTORY_RELEASE names another folder).
func TestRecordHistories(t *testing.T) {
	if !*recordHistories && os.Getenv("DBTRAIL_RECORD_HISTORIES") != "1" {
		t.Skip("records histories only with -args -record or DBTRAIL_RECORD_HISTORIES=1")
	}
	release := historyRelease()
	if release != filepath.Base(release) || strings.HasPrefix(release, ".") {
		t.Fatalf("release %q is not a folder name", release)
	}
	final := filepath.Join(historiesDir, release)
	if _, err := os.Stat(final); err == nil {
		t.Fatalf("%s exists: stored histories are never rewritten; set DBTRAIL_HISTORY_RELEASE to a new release name", final)
	}
	// Histories go to a staging folder first, renamed into place only when
	// every case was recorded: a failed recording leaves nothing behind.
	staging := filepath.Join(filepath.Dir(historiesDir), ".histories-staging-"+release)
	must(t, os.RemoveAll(staging))
	must(t, os.MkdirAll(staging, 0o755))
	t.Cleanup(func() { os.RemoveAll(staging) })

	ae := newArchiveEnv(t)
	e := ae.backupEnv
	rec := &historyRecorder{e: e, a: ae, dir: staging}
	rec.secrets = append(rec.secrets, e.source.Password, e.source.DSN(""), e.indexDSN, ae.s3.SecretKey)
	icfg, err := mysql.ParseDSN(e.indexDSN)
	must(t, err)
	rec.secrets = append(rec.secrets, icfg.Passwd)
	for _, s := range rec.secrets {
		if len(s) < 8 {
			t.Fatalf("a secret to look for is too short to search for (%d characters)", len(s))
		}
	}
	w := &workload{}
	for _, q := range []string{
		`CREATE TABLE items (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT NULL)`,
		`INSERT INTO items SELECT seq, CONCAT('v', seq), seq * 3 FROM seq_1_to_20`,
		// ExactFloats: a FLOAT table with a primary key is made exact, one
		// without a key keeps the dump's digits (FloatsAsDumped).
		`CREATE TABLE fl (id INT PRIMARY KEY, f FLOAT, s VARCHAR(10))`,
		`INSERT INTO fl SELECT seq, seq * 1.2345678, CONCAT('r', seq) FROM seq_1_to_10`,
		`CREATE TABLE flk (a INT, f FLOAT)`,
		`INSERT INTO flk VALUES (1, 1.1111111), (2, 2.2222222), (2, 2.2222222)`,
	} {
		w.exec(t, e, q)
	}
	e.waitCaughtUp(t)

	// FullBackup, ExactFloats included.
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.FullBackupWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main"})
	must(t, err)
	var full workflows.FullBackupResult
	must(t, run.Get(e.ctx, &full))
	if full.Tables != 3 || len(full.FloatsAsDumped) != 1 || !strings.Contains(full.FloatsAsDumped[0], "app.flk") {
		t.Fatalf("full backup %+v", full)
	}
	rec.save(t, "fullbackup-exactfloats", payload.FullBackupWorkflowID("main"), run.GetRunID())

	// A partial full backup (a re-dump of two tables), FLOAT table included.
	run, err = temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RedumpWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main", Tables: []string{"app.items", "app.fl"}})
	must(t, err)
	var partial workflows.FullBackupResult
	must(t, run.Get(e.ctx, &partial))
	if partial.Tables != 2 || partial.Partial == nil {
		t.Fatalf("partial full backup %+v", partial)
	}
	rec.save(t, "fullbackup-partial", payload.RedumpWorkflowID("main"), run.GetRunID())

	// A refresh that pairs (items and the FLOAT table change), and one
	// that links everything (no change).
	w.exec(t, e, "UPDATE items SET v = 'paired' WHERE id IN (1, 2)")
	w.exec(t, e, "INSERT INTO items VALUES (100, 'new', NULL)")
	w.exec(t, e, "UPDATE fl SET f = 9.87654321 WHERE id = 3")
	res := rec.refresh(t, "refresh-pair", payload.RefreshInput{TableDeltas: true}, "app.items: pair:", "app.fl: pair:", "app.flk: link:")
	res = rec.refresh(t, "refresh-link", payload.RefreshInput{TableDeltas: true}, "app.items: link:", "app.fl: link:", "app.flk: link:")
	if res.SnapshotID == "" {
		t.Fatalf("link refresh published nothing: %+v", res)
	}

	// A refresh that rewrites (table deltas off).
	w.exec(t, e, "DELETE FROM items WHERE id = 5")
	rec.refresh(t, "refresh-rewrite", payload.RefreshInput{TableDeltas: false}, "app.items: rewrite:", "app.fl: link:")

	// A schema change the fold cannot prove (a type that converts values):
	// refused without a full backup; with one allowed, that table alone is
	// re-dumped by a partial full backup run as a child.
	w.exec(t, e, "ALTER TABLE items MODIFY n VARCHAR(30)")
	w.exec(t, e, "UPDATE items SET n = 'x' WHERE id = 1")
	res = rec.refresh(t, "refresh-refused-nofullbackup", payload.RefreshInput{TableDeltas: true, NoFullBackup: true})
	if !res.Refused || res.FullBackup != "" || res.SnapshotID != "" {
		t.Fatalf("refused refresh without a full backup: %+v", res)
	}
	res = rec.refresh(t, "refresh-redump", payload.RefreshInput{TableDeltas: true})
	if res.Refused || res.Redump == nil || res.SnapshotID == "" {
		t.Fatalf("refresh with a re-dump: %+v", res)
	}
	rec.save(t, "fullbackup-child-of-refresh", payload.RedumpWorkflowID("main"), rec.child(t, "FullBackup"))

	// Pairs until the items chain reaches foldplan.CompactAt entries: that
	// refresh starts a Compact; the next one links its range.
	compacted := false
	for i := 1; i <= 20 && !compacted; i++ {
		w.exec(t, e, "UPDATE items SET n = ? WHERE id = 1", i)
		in := payload.RefreshInput{TableDeltas: true}
		e.waitCaughtUp(t)
		id, runID, res := rec.run(t, in)
		if res.Refused || !strings.Contains(strings.Join(res.Tables, "\n"), "app.items: pair:") {
			t.Fatalf("refresh %d: %+v", i, res)
		}
		if len(res.Compact) == 0 {
			continue
		}
		compacted = true
		rec.save(t, "refresh-starts-compact", id, runID)
		if err := e.waitClosed(t, payload.CompactWorkflowID("main")); err != nil {
			t.Fatalf("Compact: %v", err)
		}
		rec.save(t, "compact-items", payload.CompactWorkflowID("main"), rec.child(t, "Compact"))
	}
	if !compacted {
		t.Fatal("no refresh started a compaction")
	}
	w.exec(t, e, "UPDATE items SET n = 0 WHERE id = 2")
	rec.refresh(t, "refresh-uses-compacted", payload.RefreshInput{TableDeltas: true}, "app.items: pair:")

	// Export: a moment as Parquet (with views) and as .sql, the changes of
	// a range.
	out := t.TempDir()
	rec.export(t, "export-parquet", payload.ExportSpec{Format: payload.ExportParquet, At: "latest", Views: true, Out: filepath.Join(out, "p")})
	rec.export(t, "export-sql", payload.ExportSpec{Format: payload.ExportSQL, At: "latest", Tables: []string{"app.items"}, Out: filepath.Join(out, "x.sql")})
	rec.export(t, "export-changes", payload.ExportSpec{Format: payload.ExportChanges, From: "seq:1", Until: "latest", Out: filepath.Join(out, "c")})

	// Restore into a live server: the latest moment beside the source's
	// names, and a restore drill (recorded in the index).
	target := testsuite.StartTarget(t, 35)
	rec.secrets = append(rec.secrets, target.Password)
	rec.restore(t, "restore-into-schema", target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest",
		IntoSchema: "{schema}_restored", Schemas: []string{"app"}}})
	rec.restore(t, "restore-drill", target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest", Drill: true}})

	// Ping, Verify, Archive, Reindex, RetentionPreview, Retention.
	rec.recordOperations(t, w)

	must(t, os.MkdirAll(historiesDir, 0o755))
	must(t, os.Rename(staging, final))
	for _, f := range rec.files {
		st, err := os.Stat(filepath.Join(final, f))
		must(t, err)
		t.Logf("recorded %s (%d bytes)", filepath.Join(final, f), st.Size())
	}
}

// historyRecorder saves closed workflows' histories into dir.
type historyRecorder struct {
	e       *backupEnv
	a       *archiveEnv // e with an S3 store the worker archives to
	dir     string
	release string   // the release folder dir becomes (spreadRecorder)
	secrets []string // strings no history may contain (passwords, DSNs)
	files   []string
	last    *historypb.History // the history saved last
}

// run runs a Refresh to its end and returns its id and run id.
func (r *historyRecorder) run(t *testing.T, in payload.RefreshInput) (string, string, workflows.RefreshResult) {
	t.Helper()
	in.Source = "main"
	id := payload.RefreshWorkflowID("main")
	run, err := temporalclient.StartWorkflow(r.e.ctx, r.e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue}, workflows.Refresh, in)
	must(t, err)
	var res workflows.RefreshResult
	if err := run.Get(r.e.ctx, &res); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	return id, run.GetRunID(), res
}

// refresh waits for capture, runs a Refresh, requires each of want in its
// table lines, and saves its history as name.
func (r *historyRecorder) refresh(t *testing.T, name string, in payload.RefreshInput, want ...string) workflows.RefreshResult {
	t.Helper()
	r.e.waitCaughtUp(t)
	id, runID, res := r.run(t, in)
	lines := strings.Join(res.Tables, "\n")
	for _, s := range want {
		if !strings.Contains(lines, s) {
			t.Fatalf("%s: no table line %q in\n%s\n(result %+v)", name, s, lines, res)
		}
	}
	r.save(t, name, id, runID)
	return res
}

// export runs an Export to its end and saves its history as name.
func (r *historyRecorder) export(t *testing.T, name string, spec payload.ExportSpec) {
	t.Helper()
	r.e.waitCaughtUp(t)
	spec.Source = "main"
	id := payload.ExportWorkflowID("main", spec.Out)
	run, err := temporalclient.StartWorkflow(r.e.ctx, r.e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue},
		workflows.Export, payload.ExportInput{ExportSpec: spec})
	must(t, err)
	var res workflows.ExportResult
	if err := run.Get(r.e.ctx, &res); err != nil {
		t.Fatalf("%s: Export: %v", name, err)
	}
	r.save(t, name, id, run.GetRunID())
}

// restore runs a Restore (a RestoreDrill when in.Drill) into target to its
// end and saves its history as name.
func (r *historyRecorder) restore(t *testing.T, name string, target *testsuite.Server, in payload.RestoreInput) {
	t.Helper()
	r.e.waitCaughtUp(t)
	in.Source, in.Target = "main", r.e.target(t, target)
	id := payload.RestoreWorkflowID(in.RestoreSpec, target.Addr())
	var run client.WorkflowRun
	var err error
	if in.Drill {
		run, err = temporalclient.StartWorkflow(r.e.ctx, r.e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue},
			workflows.RestoreDrill, payload.RestoreDrillInput{Restore: in, TargetAddr: target.Addr()})
	} else {
		run, err = temporalclient.StartWorkflow(r.e.ctx, r.e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue}, workflows.Restore, in)
	}
	must(t, err)
	var res workflows.RestoreResult
	if err := run.Get(r.e.ctx, &res); err != nil || len(res.Tables) == 0 || res.Rows == 0 {
		t.Fatalf("%s: %+v, %v", name, res, err)
	}
	r.save(t, name, id, run.GetRunID())
}

// child returns the run id of the child of workflow type wfType the last
// saved history started.
func (r *historyRecorder) child(t *testing.T, wfType string) string {
	t.Helper()
	for _, ev := range r.last.GetEvents() {
		if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil && a.GetWorkflowType().GetName() == wfType {
			return a.GetWorkflowExecution().GetRunId()
		}
	}
	t.Fatalf("the last saved history started no %s child", wfType)
	return ""
}

// save fetches a completed workflow's history, checks it holds no secret
// and replays, and writes it as <name>.json.
func (r *historyRecorder) save(t *testing.T, name, workflowID, runID string) {
	t.Helper()
	r.saveEnded(t, name, workflowID, runID, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
}

// saveEnded is save of a run whose history ends with the event end (a
// failed or cancelled run's, for the paths that clean up after one).
func (r *historyRecorder) saveEnded(t *testing.T, name, workflowID, runID string, end enumspb.EventType) {
	t.Helper()
	hist := fetchHistory(t, r.e.ctx, r.e.c, workflowID, runID)
	if n := len(hist.Events); n == 0 || hist.Events[n-1].GetEventType() != end {
		t.Fatalf("%s: %s run %s has not ended with %s (%d events)", name, workflowID, runID, end, n)
	}
	f := filepath.Join(r.dir, name+".json")
	writeHistory(t, hist, f)
	checkHistoryFile(t, f, r.secrets...)
	if err := newReplayer().ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
		t.Fatalf("%s: replay: %v", name, err)
	}
	r.files = append(r.files, name+".json")
	r.last = hist
}

// fetchHistory fetches the whole history of run runID of workflowID.
func fetchHistory(t *testing.T, ctx context.Context, c client.Client, workflowID, runID string) *historypb.History {
	t.Helper()
	iter := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		must(t, err)
		hist.Events = append(hist.Events, ev)
	}
	return hist
}

// writeHistory writes hist to the new file f as protojson of
// historypb.History, one event a line (the form the SDK's HistoryFromJSON
// reads, without the indentation that doubles its size).
func writeHistory(t *testing.T, hist *historypb.History, f string) {
	t.Helper()
	b := []byte(`{"events": [`)
	for i, ev := range hist.Events {
		j, err := protojson.Marshal(ev)
		must(t, err)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, "\n  "...), j...)
	}
	b = append(b, "\n]}"...)
	out, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	must(t, err)
	_, err = out.Write(append(b, '\n'))
	must(t, err)
	must(t, out.Close())
}
