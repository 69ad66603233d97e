package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// publishedLine is what `dbtrail refresh` prints when it published.
var publishedLine = regexp.MustCompile(`snapshot (\d{8}T\d{6}Z) published from`)

// TestWorkerRetentionPolicyRulesHandStartedRefreshes: a real `dbtrail
// worker --keep-snapshots 3` process runs every workflow. Five refreshes
// started by hand with `dbtrail refresh` (one of them from a shell whose
// DBTRAIL_KEEP_SNAPSHOTS is 1, which is the worker's variable and not the
// refresh's) leave exactly the worker's 3 newest snapshots, the current
// one among them. A refresh started by a client with an input of the old
// shape (Keep 1, as a CLI of an earlier release sent) decodes and keeps 3
// as well. `dbtrail refresh --keep-snapshots 1` is refused, naming where
// the policy goes, and starts nothing. A Retention run started by hand
// with no policy, and one with an old input holding a policy keeping 1,
// plan with the worker's policy and remove nothing more.
func TestWorkerRetentionPolicyRulesHandStartedRefreshes(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	const keep = 3
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	e.exec(t, "CREATE TABLE items (id INT PRIMARY KEY, v INT)")
	e.exec(t, "INSERT INTO items VALUES (1, 0), (2, 0)")
	w := startWorkerCmd(t, bin, e.frontend, e, e.indexDSN, "--backup-dir", e.acts.BackupDir, "--work-dir", e.acts.WorkDir,
		"--keep-snapshots", "3", "--retention-every", "0", "--verify-every", "0")
	dir := filepath.Join(e.acts.BackupDir, "main")
	published := []string{e.fullBackup(t).SnapshotID}

	refreshCLI := func(env []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.CommandContext(e.ctx, bin, append([]string{"refresh", "--temporal-addr", e.frontend, "--source", "main"}, args...)...)
		cmd.Env = append(append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// checkLeft requires exactly the newest keep of published in the
	// folder, the newest current.
	checkLeft := func(what string) {
		t.Helper()
		left, err := snapshot.ListSnapshots(dir)
		must(t, err)
		want := published[max(len(published)-keep, 0):]
		if !slices.Equal(left, want) {
			t.Fatalf("%s: snapshots %v, want the worker's %d newest %v (published %v)\nworker:\n%s", what, left, keep, want, published, w.out)
		}
		cur, err := snapshot.ResolveCurrent(dir)
		must(t, err)
		if cur != published[len(published)-1] {
			t.Fatalf("%s: current %s, want %s", what, cur, published[len(published)-1])
		}
	}

	for i := 1; i <= 5; i++ {
		e.exec(t, "UPDATE items SET v = ? WHERE id = 1", i)
		var env []string
		if i == 4 {
			env = []string{"DBTRAIL_KEEP_SNAPSHOTS=1"}
		}
		out, err := refreshCLI(env)
		if err != nil {
			t.Fatalf("dbtrail refresh %d: %v\n%s", i, err, out)
		}
		m := publishedLine.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("dbtrail refresh %d published nothing:\n%s", i, out)
		}
		published = append(published, m[1])
		checkLeft("after hand-started refresh " + m[1])
	}

	// An input of the old shape: a policy of its own, ignored.
	e.exec(t, "UPDATE items SET v = 100 WHERE id = 2")
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RefreshWorkflowID("main"), TaskQueue: payload.TaskQueue},
		"Refresh", map[string]any{"Source": "main", "TableDeltas": true, "Keep": 1, "KeepDays": 0})
	must(t, err)
	var res workflows.RefreshResult
	must(t, run.Get(e.ctx, &res))
	if res.SnapshotID == "" {
		t.Fatalf("refresh with an old input published nothing: %+v", res)
	}
	published = append(published, res.SnapshotID)
	checkLeft("after a refresh whose old input said Keep 1")

	// The refused flag: an error that says where the policy goes, nothing
	// started, nothing removed.
	out, err := refreshCLI(nil, "--keep-snapshots", "1")
	if err == nil || !strings.Contains(out, "--keep-snapshots: the retention policy is the worker's") ||
		!strings.Contains(out, "dbtrail worker") || strings.Contains(out, " job ") {
		t.Fatalf("dbtrail refresh --keep-snapshots 1: %v\n%s", err, out)
	}
	checkLeft("after the refused refresh")

	// Retention started by hand: the worker's policy, in the plan.
	for i, in := range []any{payload.RetentionInput{Source: "main"},
		map[string]any{"Source": "main", "Policy": map[string]any{"keep_snapshots": 1}}} {
		run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RetentionWorkflowID("main"), TaskQueue: payload.TaskQueue},
			"Retention", in)
		must(t, err)
		var ret calls.RetentionResult
		must(t, run.Get(e.ctx, &ret))
		if ret.Plan.Policy != (retention.Policy{KeepSnapshots: keep}) || len(ret.Removed) != 0 {
			t.Fatalf("retention %d: policy %+v removed %v, want the worker's (keep %d) and nothing removed", i, ret.Plan.Policy, ret.Removed, keep)
		}
		checkLeft("after a hand-started retention")
	}
}
