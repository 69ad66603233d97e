package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// sessionCreationActivity is the SDK's activity that holds a session open
// on its worker (its pending entry names the worker).
const sessionCreationActivity = "internalSessionCreationActivity"

// machine is a `dbtrail worker` process standing for a machine of its own:
// its own backup and work folders. Only the Temporal server, the source, the
// index and the S3 store are shared.
type machine struct {
	name       string
	backupDir  string
	workDir    string
	archiveURL string
	proc       *workerProc
	pids       []int // of every process the machine ran
}

// machinesPrefix is the prefix of the S3 store the machines share.
const machinesPrefix = "backups"

// newMachinesEnv starts an S3 store and a backup env without a worker (the
// machines run them; the env's activities read the store under
// machinesPrefix), and returns the dbtrail binary, the store, the env and
// an engine to read snapshots with.
func newMachinesEnv(t *testing.T) (string, *testsuite.S3Server, *backupEnv, *fold.Engine) {
	t.Helper()
	bin := buildDbtrail(t)
	srv := testsuite.StartS3(t)
	e := newBackupEnv(t, withoutWorker(), withRemote(openS3(t, srv.URL(machinesPrefix), &s3Traffic{})))
	return bin, srv, e, newEngine(t)
}

func newMachine(e *backupEnv, name, archiveURL string) *machine {
	return &machine{name: name, archiveURL: archiveURL,
		backupDir: filepath.Join(e.dir, name, "backups"), workDir: filepath.Join(e.dir, name, "work")}
}

func (m *machine) start(t *testing.T, bin string, e *backupEnv) {
	t.Helper()
	// --dump-stall well inside waitConverting's 5 minutes: mydumper 0.10
	// can hang at start on a loaded machine, and the retry must come first.
	m.proc = startWorkerCmd(t, bin, e.frontend, e, e.indexDSN,
		"--backup-dir", m.backupDir, "--work-dir", m.workDir, "--archive-url", m.archiveURL, "--dump-stall", "90s")
	m.pids = append(m.pids, m.proc.cmd.Process.Pid)
}

// TestWorkersOnTwoMachines runs two workers with their own folders (two
// machines) and one S3 store. A full backup and refreshes run while the
// worker of the run's session is killed in the middle of a step: the run
// notices (session heartbeat), runs its steps again in a new session on
// the other machine (the killed one restarts only after the run). Between
// those, a refresh runs while the machine that published last is down, so
// the other one refreshes from what it has or downloads. Every published
// snapshot, read back from the store's current pointer, equals the live
// tables.
func TestWorkersOnTwoMachines(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin, srv, e, eng := newMachinesEnv(t)
	url := srv.URL(machinesPrefix)
	w := newWorkload(7)
	w.setup(t, e, 30)
	for _, q := range []string{
		`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq FROM seq_1_to_300000`,
	} {
		w.exec(t, e, q)
	}
	machines := []*machine{newMachine(e, "a", url), newMachine(e, "b", url)}
	for _, m := range machines {
		m.start(t, bin, e)
	}
	e.waitCaughtUp(t)
	published := map[string]int{} // machine name: snapshots published

	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.FullBackupWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main"})
	must(t, err)
	waitConverting(t, e, run, "app.big")
	victim := sessionMachine(t, e, run, machines)
	victim.proc.kill(t)
	t.Logf("full backup: killed machine %s while it converted app.big", victim.name)
	var fb workflows.FullBackupResult
	if err := run.Get(e.ctx, &fb); err != nil {
		t.Fatalf("FullBackup after the kill: %v\n%s", err, victim.proc.out.String())
	}
	hosts := sessionHosts(t, e, run, machines)
	if len(hosts) != 2 || hosts[0] != victim || hosts[1] == victim {
		t.Fatalf("full backup ran in sessions on %v; want the killed %s, then the other machine", names(hosts), victim.name)
	}
	published[hosts[1].name]++
	checkPublished(t, e, eng, fb.SnapshotID, "full backup")
	victim.start(t, bin, e)

	effective, last := 0, hosts[1]
	const rounds = 6
	for round := 1; round <= rounds; round++ {
		var idle *machine
		w.step(t, e, 6)
		w.exec(t, e, "UPDATE big SET n = n + 1 WHERE id % 97 = ?", round%97)
		e.waitCaughtUp(t)
		in := payload.RefreshInput{Source: "main", TableDeltas: round%2 == 0}
		if in.TableDeltas { // the machine that published last is down: the other one refreshes
			idle = last
			idle.proc.kill(t)
		}
		run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RefreshWorkflowID("main"), TaskQueue: payload.TaskQueue},
			workflows.Refresh, in)
		must(t, err)
		var victim *machine
		if !in.TableDeltas { // full rewrites: the step lasts long enough to kill in
			victim = waitSessionStep(t, e, run, "RefreshTable", machines)
			victim.proc.kill(t)
		}
		var res workflows.RefreshResult
		if err := run.Get(e.ctx, &res); err != nil {
			t.Fatalf("round %d: Refresh: %v", round, err)
		}
		if res.Refused || res.SnapshotID == "" {
			t.Fatalf("round %d: refused or nothing published: %+v", round, res)
		}
		hosts := sessionHosts(t, e, run, machines)
		last = hosts[len(hosts)-1]
		published[last.name]++
		if idle != nil {
			if len(hosts) != 1 || hosts[0] == idle {
				t.Fatalf("round %d: sessions on %v while %s was down", round, names(hosts), idle.name)
			}
			t.Logf("round %d: %s down; session on %v; downloaded %q", round, idle.name, names(hosts), res.Downloaded)
			idle.start(t, bin, e)
		} else if victim != nil {
			if len(hosts) == 2 && hosts[0] == victim && hosts[1] != victim {
				effective++
			}
			t.Logf("round %d: killed machine %s; sessions on %v; downloaded %q", round, victim.name, names(hosts), res.Downloaded)
			victim.start(t, bin, e)
		}
		checkPublished(t, e, eng, res.SnapshotID, fmt.Sprintf("round %d", round))
	}
	if effective == 0 {
		t.Fatal("no refresh was killed inside its session")
	}
	if published["a"] == 0 || published["b"] == 0 {
		t.Fatalf("snapshots published per machine: %v; want both machines", published)
	}
	t.Logf("%d refreshes moved to the other machine; published per machine %v", effective, published)
}

// checkPublished requires the store's current pointer to name id, and that
// snapshot, downloaded into a folder of its own and read back, to equal the
// live tables.
func checkPublished(t *testing.T, e *backupEnv, eng *fold.Engine, id, step string) {
	t.Helper()
	dir := t.TempDir()
	m, err := remote.New(e.acts.Remote, "main", dir, nil)
	must(t, err)
	cur, err := m.Current(e.ctx)
	must(t, err)
	if cur != id {
		t.Fatalf("%s: remote current %q, the run published %s", step, cur, id)
	}
	if _, err := m.Download(e.ctx, cur, nil); err != nil {
		t.Fatalf("%s: read back %s: %v", step, cur, err)
	}
	snap, err := snapshot.OpenSnapshot(snapshot.Folder(dir).Snapshot(cur))
	must(t, err)
	must(t, snap.VerifyAll())
	checkLive(t, e, eng, snap, step)
}

// waitSessionStep waits until the run has an activity of type step started
// in its open session, and returns the machine whose worker holds the
// session.
func waitSessionStep(t *testing.T, e *backupEnv, run client.WorkflowRun, step string, machines []*machine) *machine {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
		must(t, err)
		for _, pa := range desc.PendingActivities {
			if pa.GetActivityType().GetName() == step && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				return sessionMachine(t, e, run, machines)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never started", step)
	return nil
}

// sessionMachine returns the machine whose worker holds the run's open
// session (the pending session activity's worker identity starts with the
// process id).
func sessionMachine(t *testing.T, e *backupEnv, run client.WorkflowRun, machines []*machine) *machine {
	t.Helper()
	desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
	must(t, err)
	for _, pa := range desc.PendingActivities {
		if pa.GetActivityType().GetName() == sessionCreationActivity && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			if m := machineOf(pa.GetLastWorkerIdentity(), machines); m != nil {
				return m
			}
			t.Fatalf("session held by %q, no machine of the test", pa.GetLastWorkerIdentity())
		}
	}
	t.Fatal("the run has no open session")
	return nil
}

// sessionHosts returns, in order, the machines that held the sessions of a
// closed run (from its history: each session activity's start names its
// worker). A machine restarted since counts as the same machine.
func sessionHosts(t *testing.T, e *backupEnv, run client.WorkflowRun, machines []*machine) []*machine {
	t.Helper()
	scheduled := map[int64]bool{}
	var hosts []*machine
	it := e.c.GetWorkflowHistory(e.ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		must(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == sessionCreationActivity {
			scheduled[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			m := machineOfName(t, a.GetIdentity(), machines)
			hosts = append(hosts, m)
		}
	}
	return hosts
}

// machineOfName is machineOf for a worker that may have been restarted
// since: a process id no longer running is looked up in the ids each
// machine had.
func machineOfName(t *testing.T, identity string, machines []*machine) *machine {
	t.Helper()
	for _, m := range machines {
		for _, pid := range m.pids {
			if identityPID(identity) == pid {
				return m
			}
		}
	}
	t.Fatalf("session held by %q, no machine of the test", identity)
	return nil
}

// machineOf returns the machine whose running worker has identity.
func machineOf(identity string, machines []*machine) *machine {
	for _, m := range machines {
		if identityPID(identity) == m.proc.cmd.Process.Pid {
			return m
		}
	}
	return nil
}

// identityPID is the process id a default worker identity starts with
// ("<pid>@<host>@..."); -1 when it does not.
func identityPID(identity string) int {
	pid, err := strconv.Atoi(strings.SplitN(identity, "@", 2)[0])
	if err != nil {
		return -1
	}
	return pid
}

func names(ms []*machine) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name)
	}
	return out
}
