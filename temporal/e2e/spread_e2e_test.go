package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// spreadTables is how many tables TestRefreshSpreadOverTwoWorkers changes
// in every refresh.
const spreadTables = 12

// tableAttempt is one attempt of RefreshTable in a run's history: its
// table, whether it was shared, the machine whose worker started it and
// whether it completed.
type tableAttempt struct {
	table     string
	shared    bool
	machine   *machine
	completed bool
}

// TestRefreshSpreadOverTwoWorkers runs two `dbtrail worker` processes with
// their own folders (two machines) on one S3 store. A refresh of a source
// whose twelve tables all changed runs its tables on both machines (by the
// worker identities of its history's RefreshTable starts) and publishes
// one snapshot equal to the live tables. A second refresh loses the
// machine that does not hold its session in the middle of a shared table:
// the refresh keeps its one session, the lost machine's tables run again
// on the other one, and the published snapshot equals the live tables.
func TestRefreshSpreadOverTwoWorkers(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin, srv, e, eng := newMachinesEnv(t)
	url := srv.URL(machinesPrefix)
	w := newWorkload(11)
	for i := 1; i <= spreadTables; i++ {
		w.exec(t, e, fmt.Sprintf("CREATE TABLE t%02d (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)", i))
		w.exec(t, e, fmt.Sprintf("INSERT INTO t%02d SELECT seq, CONCAT('row-', seq, REPEAT('x', seq %% 40)), seq FROM seq_1_to_60000", i))
	}
	change := func(round int) {
		for i := 1; i <= spreadTables; i++ {
			w.exec(t, e, fmt.Sprintf("UPDATE t%02d SET n = n + 1 WHERE id %% 101 = ?", i), round%101)
			w.exec(t, e, fmt.Sprintf("DELETE FROM t%02d WHERE id = ?", i), 1000+round)
			w.exec(t, e, fmt.Sprintf("INSERT INTO t%02d VALUES (?, 'new', ?)", i), 100000+round, round)
		}
	}
	machines := []*machine{newMachine(e, "a", url), newMachine(e, "b", url)}
	for _, m := range machines {
		m.start(t, bin, e)
	}
	e.waitCaughtUp(t)
	checkPublished(t, e, eng, e.fullBackup(t).SnapshotID, "full backup")
	// Both machines poll their own queues once they have polled for a
	// while; the refresh asks for the live ones.
	waitOwnQueues(t, e, machines)

	// Round 1: the tables run on both machines.
	change(1)
	e.waitCaughtUp(t)
	run := startSpreadRefresh(t, e)
	var res workflows.RefreshResult
	must(t, run.Get(e.ctx, &res))
	hosts := sessionHosts(t, e, run, machines)
	attempts := refreshTableAttempts(t, e, run, machines)
	per := map[string][]string{}
	for _, at := range attempts {
		if at.machine == nil {
			t.Fatalf("round 1: RefreshTable of %s never started", at.table)
		}
		per[at.machine.name] = append(per[at.machine.name], at.table)
		if at.shared == (at.machine == hosts[0]) {
			t.Fatalf("table %s on machine %s shared=%v; the session is on %s", at.table, at.machine.name, at.shared, hosts[0].name)
		}
	}
	t.Logf("round 1: session on %v; tables per machine %v", names(hosts), per)
	if len(hosts) != 1 || len(per["a"]) == 0 || len(per["b"]) == 0 || len(attempts) != spreadTables {
		t.Fatalf("round 1: sessions %v, %d table attempts, per machine %v; want one session and tables on both machines",
			names(hosts), len(attempts), per)
	}
	checkPublished(t, e, eng, res.SnapshotID, "round 1")
	round1 := res.SnapshotID
	// The shared tables' files were on the store only as parts: the upload
	// copied them into their content objects and dropped them.
	if up := res.Upload; up == nil || up.FilesCopied < len(per[otherThan(hosts[0], machines).name]) {
		t.Fatalf("round 1: upload %+v; want the shared tables' files copied from their parts", up)
	}
	if stray := strayObjects(t, e, e.mirror(t), res.SnapshotID); len(stray) != 0 {
		t.Fatalf("round 1: objects of snapshot %s outside its manifest: %v", res.SnapshotID, stray)
	}
	rec := spreadRecorder(t, e, srv.SecretKey)
	rec.saveRun(t, "refresh-spread", run)

	// Round 2: the machine without the session dies in a shared table.
	change(2)
	e.waitCaughtUp(t)
	run = startSpreadRefresh(t, e)
	victim := waitSharedTable(t, e, run, machines)
	victim.proc.kill(t)
	t.Logf("round 2: killed machine %s in a shared table", victim.name)
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("round 2: Refresh after the kill: %v", err)
	}
	hosts = sessionHosts(t, e, run, machines)
	if len(hosts) != 1 || hosts[0] == victim {
		t.Fatalf("round 2: sessions on %v; want one, not on the killed %s", names(hosts), victim.name)
	}
	lost, redone := 0, 0
	attempts = refreshTableAttempts(t, e, run, machines)
	for _, at := range attempts {
		if at.completed || at.machine != victim && (at.machine != nil || !at.shared) {
			continue // an attempt never started was placed on the dead machine
		}
		lost++
		if slices.ContainsFunc(attempts, func(o tableAttempt) bool { return o.table == at.table && o.machine == hosts[0] && o.completed }) {
			redone++
		}
	}
	t.Logf("round 2: %d table attempts; %d lost with %s, %d of them redone on %s", len(attempts), lost, victim.name, redone, hosts[0].name)
	if lost == 0 || redone != lost {
		t.Fatalf("round 2: %d tables lost with the killed machine, %d redone on the session's; attempts %+v", lost, redone, attempts)
	}
	if len(attempts)-lost != spreadTables {
		t.Fatalf("round 2: %d attempts, %d lost: the kill cost more than its tables", len(attempts), lost)
	}
	checkPublished(t, e, eng, res.SnapshotID, "round 2")
	// Round 1's shared tables recorded its run as their parts' owner; its
	// upload deleted the parts, and round 2's sweep the record, that run
	// being over.
	if sw := res.SweptParts; sw == nil || !slices.Contains(sw.Removed, round1) {
		t.Fatalf("round 2: swept %+v; want the owner record of round 1's %s", sw, round1)
	}
	m := e.mirror(t)
	if stray := strayObjects(t, e, m, res.SnapshotID); len(stray) != 0 {
		t.Fatalf("round 2: objects of snapshot %s outside its manifest: %v", res.SnapshotID, stray)
	}
	rec.saveRun(t, "refresh-spread-worker-lost", run)

	// Round 3: a refresh cancelled once a shared table put files leaves
	// nothing of its snapshot id on the store.
	victim.start(t, bin, e)
	waitOwnQueues(t, e, machines)
	change(3)
	e.waitCaughtUp(t)
	known, err := m.List(e.ctx)
	must(t, err)
	run = startSpreadRefresh(t, e)
	id := waitUnpublishedObject(t, e, m, known)
	must(t, e.c.CancelWorkflow(e.ctx, run.GetID(), run.GetRunID()))
	if err := run.Get(e.ctx, &res); err == nil {
		t.Fatal("round 3: the cancelled refresh succeeded")
	}
	if left := strayObjects(t, e, m, id); len(left) != 0 {
		t.Fatalf("round 3: the cancelled refresh left objects of %s on the store: %v", id, left)
	}
	// Only the owner record its shared tables put first: the run, for the
	// next refresh's sweep (TestRefreshSweepsLeftoverParts).
	folders, err := m.PartsFolders(e.ctx)
	must(t, err)
	if i := slices.IndexFunc(folders, func(f remote.PartsFolder) bool { return f.ID == id }); i < 0 || folders[i].Parts != 0 ||
		folders[i].Owner == nil || *folders[i].Owner != (snapshot.Owner{WorkflowID: run.GetID(), RunID: run.GetRunID()}) {
		t.Fatalf("round 3: parts folders %+v; want the owner record of %s naming the cancelled run", folders, id)
	}
	t.Logf("round 3: cancelled refresh of %s left nothing on the store", id)
	// Its history holds the cleanups' change ids (discard-staging-on-failure,
	// discard-shared-on-failure).
	rec.saveRunEnded(t, "refresh-spread-cancelled", run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED)
	rec.install(t)
}

// otherThan is the machine of machines that is not m.
func otherThan(m *machine, machines []*machine) *machine {
	for _, o := range machines {
		if o != m {
			return o
		}
	}
	return nil
}

// strayObjects lists the store's objects under snapshot id's name other
// than its remote manifest (every object of id when it has no manifest:
// its files are content objects, shared, never under its name) and the
// shared tables' parts of id.
func strayObjects(t *testing.T, e *backupEnv, m *remote.Mirror, id string) []string {
	t.Helper()
	named := map[string]bool{m.SnapshotName(id, snapshot.ManifestName): true}
	if _, _, err := m.ReadManifest(e.ctx, id); errors.Is(err, fs.ErrNotExist) {
		named = nil
	} else if err != nil {
		t.Fatal(err)
	}
	var stray []string
	for _, prefix := range []string{m.SnapshotName(id, "") + "/", m.PartName(id, "", "") + "/"} {
		must(t, e.acts.Remote.List(e.ctx, prefix, func(info storage.Info) error {
			if !named[info.Name] {
				stray = append(stray, info.Name)
			}
			return nil
		}))
	}
	return stray
}

// errFoundObject stops a listing at the object looked for.
var errFoundObject = errors.New("found")

// waitUnpublishedObject waits until the store holds a part of a snapshot
// id not in known (put by a shared table of the running refresh) and
// returns that id.
func waitUnpublishedObject(t *testing.T, e *backupEnv, m *remote.Mirror, known []string) string {
	t.Helper()
	prefix := m.PartName("", "", "") + "/"
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		var id string
		err := e.acts.Remote.List(e.ctx, prefix, func(info storage.Info) error {
			if s, _, ok := strings.Cut(strings.TrimPrefix(info.Name, prefix), "/"); ok && !slices.Contains(known, s) {
				id = s
				return errFoundObject
			}
			return nil
		})
		if !errors.Is(err, errFoundObject) {
			must(t, err)
		}
		if id != "" {
			return id
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no shared table put a file of the refresh's snapshot on the store")
	return ""
}

// spreadRecorder is nil unless recording histories is asked
// (TestRecordHistories' -record or DBTRAIL_RECORD_HISTORIES=1); then it
// saves the test's refresh histories, at the test's end, as release
// <release>-spread (the spread path's histories, for
// TestReplayStoredHistories).
func spreadRecorder(t *testing.T, e *backupEnv, s3Secret string) *historyRecorder {
	t.Helper()
	return releaseRecorder(t, e, "-spread", s3Secret)
}

// releaseRecorder is nil unless recording histories is asked
// (TestRecordHistories' -record or DBTRAIL_RECORD_HISTORIES=1); then it is
// a recorder of release <release><suffix>, which install puts in place,
// refusing a history that holds any of secrets or e's passwords and DSNs.
func releaseRecorder(t *testing.T, e *backupEnv, suffix string, secrets ...string) *historyRecorder {
	t.Helper()
	if !*recordHistories && os.Getenv("DBTRAIL_RECORD_HISTORIES") != "1" {
		return nil
	}
	release := historyRelease() + suffix
	if _, err := os.Stat(filepath.Join(historiesDir, release)); err == nil {
		t.Fatalf("release %s exists: stored histories are never rewritten", release)
	}
	staging := filepath.Join(filepath.Dir(historiesDir), ".histories-staging-"+release)
	must(t, os.RemoveAll(staging))
	must(t, os.MkdirAll(staging, 0o755))
	t.Cleanup(func() { os.RemoveAll(staging) })
	icfg, err := mysql.ParseDSN(e.indexDSN)
	must(t, err)
	return &historyRecorder{e: e, dir: staging, release: release,
		secrets: append([]string{e.source.Password, e.source.DSN(""), e.indexDSN, icfg.Passwd}, secrets...)}
}

// saveRun saves the completed run's history as name (nothing when r is
// nil).
func (r *historyRecorder) saveRun(t *testing.T, name string, run client.WorkflowRun) {
	t.Helper()
	r.saveRunEnded(t, name, run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
}

// saveRunEnded saves the history of run, ended with the event end, as
// name (nothing when r is nil).
func (r *historyRecorder) saveRunEnded(t *testing.T, name string, run client.WorkflowRun, end enumspb.EventType) {
	t.Helper()
	if r != nil {
		r.saveEnded(t, name, run.GetID(), run.GetRunID(), end)
	}
}

// install moves the saved histories into place (nothing when r is nil).
func (r *historyRecorder) install(t *testing.T) {
	t.Helper()
	if r != nil {
		must(t, os.Rename(r.dir, filepath.Join(historiesDir, r.release)))
		t.Logf("histories %v stored as release %s", r.files, r.release)
	}
}

// startSpreadRefresh starts a refresh that rewrites every changed table.
func startSpreadRefresh(t *testing.T, e *backupEnv) client.WorkflowRun {
	t.Helper()
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RefreshWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.Refresh, payload.RefreshInput{Source: "main", Parallel: 2})
	must(t, err)
	return run
}

// waitOwnQueues waits until the server lists every machine's worker as a
// live poller of its own queue (temporalclient.Workers).
func waitOwnQueues(t *testing.T, e *backupEnv, machines []*machine) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		ids, err := temporalclient.Workers{Client: e.c}.LiveWorkers(e.ctx, payload.TaskQueue)
		must(t, err)
		n := 0
		for _, id := range ids {
			if machineOf(id, machines) != nil {
				n++
			}
		}
		if n == len(machines) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the machines' workers never polled their own queues")
}

// waitSharedTable waits until a RefreshTable of the run is running on the
// machine that does not hold the run's session, and returns that machine.
func waitSharedTable(t *testing.T, e *backupEnv, run client.WorkflowRun, machines []*machine) *machine {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
		must(t, err)
		var session *machine
		var started []*machine
		for _, pa := range desc.PendingActivities {
			if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
				continue
			}
			switch pa.GetActivityType().GetName() {
			case sessionCreationActivity:
				session = machineOf(pa.GetLastWorkerIdentity(), machines)
			case "RefreshTable":
				started = append(started, machineOf(pa.GetLastWorkerIdentity(), machines))
			}
		}
		for _, m := range started {
			if m != nil && session != nil && m != session {
				return m
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no RefreshTable ran outside the session's machine")
	return nil
}

// refreshTableAttempts reads every RefreshTable attempt of a closed run
// from its history (machine nil: never started).
func refreshTableAttempts(t *testing.T, e *backupEnv, run client.WorkflowRun, machines []*machine) []tableAttempt {
	t.Helper()
	byScheduled := map[int64]int{}
	var out []tableAttempt
	it := e.c.GetWorkflowHistory(e.ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		must(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "RefreshTable" {
			var in calls.RefreshTableInput
			must(t, converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in))
			byScheduled[ev.GetEventId()] = len(out)
			out = append(out, tableAttempt{table: in.Table.Key.String(), shared: in.Shared})
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			if i, ok := byScheduled[a.GetScheduledEventId()]; ok {
				out[i].machine = machineOfName(t, a.GetIdentity(), machines)
			}
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			if i, ok := byScheduled[a.GetScheduledEventId()]; ok {
				out[i].completed = true
			}
		}
	}
	return out
}
