package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestPartialFullBackup: a source of four tables (two whose names one LIKE
// pattern matches: a_1 and ab1) and a view is backed up in full; more is
// written; a partial full backup of app.t2 and app.a_1 then dumps those two
// only (the Dump step's input and result in the history), at a position
// mapped to the index's seq, and finishes a partial snapshot: current is
// unchanged, no lister of the source's snapshots (moments, retention, the
// snapshots command, views.sql) shows it, moment.LocalCatalog.Open opens
// it, its two tables equal the live ones (no write since), status shows
// the re-dump, the history replays, and RemovePartial removes it (again:
// success) without touching a published snapshot. Table lists naming a
// table the source lacks, a view or a bad name are refused before anything
// is dumped. The CLI's `backup full --tables` runs one too.
func TestPartialFullBackup(t *testing.T) {
	e := newBackupEnv(t)
	w := &workload{}
	for _, q := range []string{
		`CREATE TABLE a_1 (id INT PRIMARY KEY, v VARCHAR(20))`,
		`CREATE TABLE ab1 (id INT PRIMARY KEY, v VARCHAR(20))`,
		`CREATE TABLE t2 (id INT PRIMARY KEY, n BIGINT, f FLOAT)`,
		`CREATE TABLE t3 (id INT PRIMARY KEY, s TEXT)`,
		`CREATE VIEW v AS SELECT id FROM t3`,
		`INSERT INTO a_1 SELECT seq, CONCAT('a', seq) FROM seq_1_to_300`,
		`INSERT INTO ab1 SELECT seq, CONCAT('b', seq) FROM seq_1_to_200`,
		`INSERT INTO t2 SELECT seq, seq * 11, seq * 1.2345678 FROM seq_1_to_500`,
		`INSERT INTO t3 SELECT seq, REPEAT('x', seq % 50) FROM seq_1_to_100`,
	} {
		w.exec(t, e, q)
	}
	full := e.fullBackup(t)
	srcDir := filepath.Join(e.acts.BackupDir, "main")
	for _, q := range []string{
		`INSERT INTO a_1 SELECT seq, CONCAT('later', seq) FROM seq_301_to_350`,
		`UPDATE a_1 SET v = 'changed' WHERE id % 7 = 0`,
		`DELETE FROM t2 WHERE id % 5 = 0`,
		`UPDATE t2 SET f = f * 3 WHERE id % 3 = 0`,
		`INSERT INTO ab1 VALUES (1000, 'not dumped')`,
		`INSERT INTO t3 VALUES (1000, 'not dumped')`,
	} {
		w.exec(t, e, q)
	}
	e.waitCaughtUp(t)
	cp, _, err := e.store.LoadCheckpoint(e.ctx, "main")
	must(t, err)

	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RedumpWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main", Tables: []string{"app.t2", "app.a_1", "app.t2"}})
	must(t, err)
	var res workflows.FullBackupResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("partial FullBackup: %v", err)
	}
	want := []string{"app.a_1", "app.t2"}
	var liveN int
	must(t, e.src.QueryRowContext(e.ctx, "SELECT (SELECT COUNT(*) FROM a_1) + (SELECT COUNT(*) FROM t2)").Scan(&liveN))
	if res.Partial == nil || res.Tables != 2 || res.Rows != int64(liveN) || res.Upload != nil || res.Position.Seq != cp.LastSeq ||
		!slices.Equal(sortedCopy(res.Partial.Tables), want) || res.Partial.Took <= 0 || res.Partial.Host == "" {
		t.Fatalf("partial result %+v (partial %+v), want 2 tables, %d rows, seq %d", res, res.Partial, liveN, cp.LastSeq)
	}
	in, out := dumpOfRun(t, e, run)
	if !slices.Equal(in.Tables, want) {
		t.Fatalf("Dump was asked for %v, want %v", in.Tables, want)
	}
	var dumped []string
	for _, tr := range out.Tables {
		dumped = append(dumped, tr.Schema+"."+tr.Table)
	}
	if !slices.Equal(sortedCopy(dumped), want) || len(out.SkippedViews) != 0 {
		t.Fatalf("Dump dumped %v (views %v), want %v only", dumped, out.SkippedViews, want)
	}

	// current is the full backup's; nothing lists the partial snapshot.
	if cur := e.current(t); cur.Manifest.SnapshotID != full.SnapshotID {
		t.Fatalf("current is %s, want the full backup's %s", cur.Manifest.SnapshotID, full.SnapshotID)
	}
	checkPartialUnlisted(t, e, srcDir, res.SnapshotID)

	// Opened by id, it holds the two tables as they are now.
	snap, err := moment.LocalCatalog{SourceDir: srcDir}.Open(e.ctx, res.SnapshotID)
	must(t, err)
	must(t, snap.VerifyAll())
	if snap.Manifest.Kind != snapshot.SnapshotPartial || len(snap.Manifest.Tables) != 2 || snap.Manifest.Position.Seq != res.Position.Seq {
		t.Fatalf("partial manifest: kind %q, %d tables, seq %d", snap.Manifest.Kind, len(snap.Manifest.Tables), snap.Manifest.Position.Seq)
	}
	compareTable(t, e, snap, "a_1")
	compareExact(t, e, snap, "t2") // FLOAT values, made exact by ExactFloats
	for _, table := range []string{"a_1", "t2"} {
		v, err := verify.Table(e.ctx, e.src, snap, "app", table, verify.Options{Explain: true})
		must(t, err)
		if v.Verdict != verify.Match {
			t.Fatalf("verify app.%s of the partial snapshot: %s (%s) %v", table, v.Verdict, v.Reason, v.Diff)
		}
	}
	if _, err := snap.OpenTable("app", "ab1"); err == nil {
		t.Fatal("the partial snapshot holds app.ab1, which was not asked for")
	}

	bin, err := shared.dbtrail()
	must(t, err)
	status := runStatus(t, e, bin)
	if !strings.Contains(status, "last redump") || !strings.Contains(status, "2 tables (app.a_1, app.t2)") ||
		!strings.Contains(status, "rows read from the source") || !strings.Contains(status, res.SnapshotID) {
		t.Fatalf("status does not show the re-dump:\n%s", status)
	}
	replay(t, e, payload.RedumpWorkflowID("main"))
	checkRetentionRemovesStalePartial(t, e, srcDir, res.SnapshotID, full.SnapshotID)

	// RemovePartial: a published snapshot's id is no partial (nothing
	// removed), the partial one goes, and again is success.
	must(t, e.acts.RemovePartial(e.ctx, calls.RemovePartialInput{Source: "main", SnapshotID: full.SnapshotID}))
	if cur := e.current(t); cur.Manifest.SnapshotID != full.SnapshotID {
		t.Fatalf("current %s after RemovePartial of the published snapshot's id", cur.Manifest.SnapshotID)
	}
	must(t, e.acts.RemovePartial(e.ctx, calls.RemovePartialInput{Source: "main", SnapshotID: res.SnapshotID}))
	must(t, e.acts.RemovePartial(e.ctx, calls.RemovePartialInput{Source: "main", SnapshotID: res.SnapshotID}))
	if _, err := os.Stat(snapshot.Folder(srcDir).Partial(res.SnapshotID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial snapshot still there: %v", err)
	}
	if _, err := (moment.LocalCatalog{SourceDir: srcDir}).Open(e.ctx, res.SnapshotID); !errors.Is(err, moment.ErrSnapshotGone) {
		t.Fatalf("open a removed partial snapshot: want gone, got %v", err)
	}

	// Bad lists are refused, naming what is wrong, before any dump.
	for i, c := range []struct {
		tables []string
		says   string
	}{
		{[]string{"app.t2", "app.nope"}, "no table app.nope"},
		{[]string{"app.v"}, "no table app.v"},
		{[]string{"t2"}, "not schema.table"},
		{[]string{"app.t2;DROP"}, "may hold only"},
	} {
		id := payload.RedumpWorkflowID("main") + "-bad-" + string(rune('a'+i))
		run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue},
			workflows.FullBackup, payload.FullBackupInput{Source: "main", Tables: c.tables})
		must(t, err)
		err = run.Get(e.ctx, nil)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != payload.ErrBadInput || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("%v: want BadInput saying %q, got %v", c.tables, c.says, err)
		}
	}
	if ids, err := snapshot.ListPartials(srcDir); err != nil || len(ids) != 0 {
		t.Fatalf("partial snapshots after refused runs: %v %v", ids, err)
	}

	// The CLI starts one as a backup job: `backup full --tables`.
	cli := exec.CommandContext(e.ctx, bin, "backup", "full", "--temporal-addr", e.frontend, "--tables", "app.t3")
	cliOut, err := cli.Output()
	if err != nil || !strings.Contains(string(cliOut), "partial snapshot ") || !strings.Contains(string(cliOut), "1 tables (app.t3)") {
		t.Fatalf("backup full --tables (%v):\n%s", err, cliOut)
	}
	if ids, err := snapshot.ListPartials(srcDir); err != nil || len(ids) != 1 {
		t.Fatalf("partial snapshots after the CLI's: %v %v", ids, err)
	}
	if cur := e.current(t); cur.Manifest.SnapshotID != full.SnapshotID {
		t.Fatalf("current %s after the CLI's partial full backup", cur.Manifest.SnapshotID)
	}
	if status := runStatus(t, e, bin); !strings.Contains(status, "1 tables (app.t3)") {
		t.Fatalf("status does not show the CLI's re-dump:\n%s", status)
	}
}

// checkRetentionRemovesStalePartial copies the partial snapshot id under
// an id three days older (a partial snapshot a failed run left), runs
// Retention keeping every snapshot, and requires that it removed the old
// partial snapshot only: id and the published snapshot full stay.
func checkRetentionRemovesStalePartial(t *testing.T, e *backupEnv, srcDir, id, full string) {
	t.Helper()
	made, err := snapshot.ParseSnapshotID(id)
	must(t, err)
	old := made.Add(-72 * time.Hour).Format("20060102T150405Z")
	dst := snapshot.Folder(srcDir).Partial(old)
	must(t, os.CopyFS(dst, os.DirFS(snapshot.Folder(srcDir).Partial(id))))
	man, err := os.ReadFile(filepath.Join(dst, snapshot.ManifestName))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dst, snapshot.ManifestName), []byte(strings.ReplaceAll(string(man), id, old)), 0o600))
	if ids, err := snapshot.ListPartials(srcDir); err != nil || !slices.Equal(ids, []string{old, id}) {
		t.Fatalf("partial snapshots before retention: %v %v", ids, err)
	}
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RetentionWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.Retention, payload.RetentionInput{Source: "main"})
	must(t, err)
	var ret calls.RetentionResult
	must(t, run.Get(e.ctx, &ret))
	if !slices.Equal(ret.PartialsRemoved, []string{old}) || len(ret.Removed) != 0 || len(ret.Failed) != 0 {
		t.Fatalf("retention removed partials %v, snapshots %v, failed %v; want the old partial only", ret.PartialsRemoved, ret.Removed, ret.Failed)
	}
	if ids, err := snapshot.ListPartials(srcDir); err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("partial snapshots after retention: %v %v", ids, err)
	}
	if cur := e.current(t); cur.Manifest.SnapshotID != full {
		t.Fatalf("current %s after retention", cur.Manifest.SnapshotID)
	}
}

// checkPartialUnlisted requires that no lister of the source's snapshots
// names the partial snapshot id: moments' catalog, retention's local
// place, the snapshots command, views.sql.
func checkPartialUnlisted(t *testing.T, e *backupEnv, srcDir, id string) {
	t.Helper()
	ms, err := moment.LocalCatalog{SourceDir: srcDir}.Manifests(e.ctx)
	must(t, err)
	for _, m := range ms {
		if m.SnapshotID == id || m.Kind == snapshot.SnapshotPartial {
			t.Fatalf("moment catalog lists the partial snapshot %s", m.SnapshotID)
		}
	}
	pl, err := snapshot.List(srcDir)
	must(t, err)
	for _, s := range pl.Snapshots {
		if s.ID == id {
			t.Fatalf("retention's local place lists the partial snapshot %s", id)
		}
	}
	if pl.Current == id {
		t.Fatalf("retention sees the partial snapshot %s as current", id)
	}
	bin, err := shared.dbtrail()
	must(t, err)
	out, err := exec.CommandContext(e.ctx, bin, "snapshots", "--backup-dir", e.acts.BackupDir, "--json").CombinedOutput()
	if err != nil || strings.Contains(string(out), id) {
		t.Fatalf("dbtrail snapshots (%v) names the partial snapshot %s:\n%s", err, id, out)
	}
	if views, err := os.ReadFile(filepath.Join(srcDir, "views.sql")); err != nil || strings.Contains(string(views), id) {
		t.Fatalf("views.sql (%v) names the partial snapshot %s", err, id)
	}
}

// dumpOfRun reads the input and result of run's Dump step from its
// history.
func dumpOfRun(t *testing.T, e *backupEnv, run client.WorkflowRun) (calls.DumpInput, calls.DumpResult) {
	t.Helper()
	var in calls.DumpInput
	var out calls.DumpResult
	scheduled, found := int64(-1), false
	it := e.c.GetWorkflowHistory(e.ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		must(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Dump" {
			must(t, converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in))
			scheduled = ev.GetEventId()
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && a.GetScheduledEventId() == scheduled {
			must(t, converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &out))
			found = true
		}
	}
	if !found {
		t.Fatal("no completed Dump in the history")
	}
	return in, out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
