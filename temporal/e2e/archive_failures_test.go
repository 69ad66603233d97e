package e2e

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// bulkHours fills n stamped past hours, base plus first hours onwards,
// with rows big enough that an hour's file takes a moment to write and
// upload: steps of the workload, then perHour rows of 500 random bytes each
// in table bulk. With first 0 it creates the tables first (stamped base).
func bulkHours(t *testing.T, e *archiveEnv, w *workload, base time.Time, first, n, perHour int) {
	t.Helper()
	if first == 0 {
		e.stampHour(t, base, 0)
		w.setup(t, e.backupEnv, 20)
		_, err := e.src.ExecContext(e.ctx, "CREATE TABLE bulk (id INT PRIMARY KEY, pad VARBINARY(600))")
		must(t, err)
	}
	for k := first; k < first+n; k++ {
		hour := base.Add(time.Duration(k) * time.Hour)
		e.pastTraffic(t, w, hour, 10)
		e.stampHour(t, hour, 3000)
		_, err := e.src.ExecContext(e.ctx, "INSERT INTO bulk SELECT seq + ?, RANDOM_BYTES(500) FROM seq_1_to_1000000 WHERE seq <= ?",
			k*perHour, perHour)
		must(t, err)
	}
	e.stampHour(t, time.Time{}, 0)
	e.waitCaughtUp(t)
}

// checkNothingLost requires, for every hour of orig, that the index still
// holds all its events, or that the hour has a confirmed archive record
// (and, with checkStore, that the stored file is that record's).
func checkNothingLost(t *testing.T, e *archiveEnv, orig map[uint64]change.Event, checkStore bool) (dropped int) {
	t.Helper()
	perHour := map[uint32]int64{}
	for _, ev := range orig {
		perHour[change.HourID(ev.CommitTime)]++
	}
	for h, n := range perHour {
		got, err := e.store.CountHour(e.ctx, "main", h)
		must(t, err)
		if got == n {
			continue
		}
		dropped++
		rec, ok, err := e.store.ArchiveOf(e.ctx, "main", h)
		must(t, err)
		if !ok || !rec.Confirmed() || rec.Events < n-got {
			t.Fatalf("hour %s: %d of %d events left in the index, archive record %+v (found %v)", index.PartitionName(h), got, n, rec, ok)
		}
		if checkStore {
			info, err := e.remote.Stat(e.ctx, rec.Object)
			must(t, err)
			if info.Size != rec.Size || (info.SHA256 != "" && info.SHA256 != rec.SHA256) {
				t.Fatalf("hour %s: stored %+v, record %+v", index.PartitionName(h), info, rec)
			}
		}
	}
	return dropped
}

// TestArchiveS3Down: the S3 server is killed while the run archives its
// first hour; the run fails with an error naming the store, no hour whose
// file is not confirmed leaves the index; after a restart the next run
// archives every hour, nothing lost, nothing twice.
func TestArchiveS3Down(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	e := newArchiveEnv(t)
	base := time.Now().UTC().Truncate(time.Hour).Add(-30 * time.Hour)
	must(t, e.store.SplitPartitions(e.ctx, change.HourID(base)))
	bulkHours(t, e, newWorkload(31), base, 0, 4, 20000)
	orig := indexEvents(t, e.ctx, e.store, "main")

	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.ArchiveWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.Archive, payload.ArchiveInput{Source: "main", IndexHours: 24})
	must(t, err)
	local := filepath.Join(e.acts.WorkDir, "main", "archive", index.PartitionName(change.HourID(base))+".parquet")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(local); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first hour's file was never written")
		}
		time.Sleep(2 * time.Millisecond)
	}
	must(t, e.s3.Kill())
	t.Log("S3 server killed after the first hour's file was written")
	err = run.Get(e.ctx, nil)
	if err == nil {
		t.Fatal("the archive run succeeded with the S3 server down")
	}
	t.Logf("run failed: %v", err)
	if !strings.Contains(err.Error(), e.remote.Location()) || !strings.Contains(err.Error(), "archive") {
		t.Fatalf("the error does not name the archive location %s: %v", e.remote.Location(), err)
	}
	dropped := checkNothingLost(t, e, orig, false)
	if dropped == 4 {
		t.Fatal("every hour was dropped although the S3 server was down")
	}
	recs, err := e.store.Archives(e.ctx, "main")
	must(t, err)
	for _, r := range recs {
		t.Logf("record %s confirmed %v", index.PartitionName(r.Hour), r.Confirmed())
	}

	must(t, e.s3.Restart(e.ctx))
	res := e.runArchive(t, 24)
	t.Logf("after the restart: %d hours archived", len(res.Hours))
	if checkNothingLost(t, e, orig, true) != 4 {
		t.Fatal("not every hour was archived after the restart")
	}
	stored, _ := storedEvents(t, e.ctx, e.remote, "main")
	checkEveryEventOnce(t, orig, values(indexEvents(t, e.ctx, e.store, "main")), stored)
}

// TestReindexBadInput: of four archived hours, one file is truncated
// and one altered in the store; `dbtrail reindex` names both,
// restores the two others, records the missing seqs as a gap, and exits
// non-zero. A missing bucket or wrong keys make it fail at start with a
// clear message, with no run started. status and archives show what is
// archived.
func TestReindexBadInput(t *testing.T) {
	e := newArchiveEnv(t, withoutWorker())
	e.queueWorker(t, e.store, "archive-a")
	base := time.Now().UTC().Truncate(time.Hour).Add(-30 * time.Hour)
	bulkHours(t, e, newWorkload(41), base, 0, 4, 2000)
	orig := indexEvents(t, e.ctx, e.store, "main")
	if res := e.runArchiveOn(t, "archive-a", 24); len(res.Hours) != 4 {
		t.Fatalf("archived %+v", res.Hours)
	}
	truncated := archive.ObjectName("main", base.Add(time.Hour))
	altered := archive.ObjectName("main", base.Add(2*time.Hour))
	e.damage(t, truncated, func(b []byte) []byte { return b[:len(b)*2/3] })
	e.damage(t, altered, func(b []byte) []byte { b[len(b)/3] ^= 0x40; return b })

	// The worker of the CLI's task queue has an empty index.
	storeB := e.otherIndex(t)
	e.queueWorker(t, storeB, payload.TaskQueue)
	bin := buildDbtrail(t)
	cmd := exec.Command(bin, "reindex", "--temporal-addr", e.frontend, "--archive-url", e.url)
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	out, err := cmd.CombinedOutput()
	t.Logf("dbtrail reindex:\n%s", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("reindex with damaged archives: %v", err)
	}
	for _, w := range []string{"restored 2 hours", "GAP ", "NOT RESTORED archive " + truncated, "NOT RESTORED restore", altered, "capture gap(s) recorded"} {
		if !strings.Contains(string(out), w) {
			t.Fatalf("reindex does not say %q", w)
		}
	}
	restored := indexEvents(t, e.ctx, storeB, "main")
	for seq, ev := range restored {
		if d := eventDiff(ev, orig[seq]); d != "" {
			t.Fatalf("restored seq %d: %s", seq, d)
		}
		if h := change.HourID(ev.CommitTime); h == change.HourID(base)+1 || h == change.HourID(base)+2 {
			t.Fatalf("seq %d of a damaged hour was restored", seq)
		}
	}
	gaps, err := storeB.Gaps(e.ctx, "main")
	must(t, err)
	if len(gaps) != 1 || !strings.Contains(gaps[0].Reason, "no archive file") {
		t.Fatalf("gaps %+v", gaps)
	}
	var last uint64
	for seq := range restored {
		last = max(last, seq)
	}
	if cp, ok, _ := storeB.LoadCheckpoint(e.ctx, "main"); !ok || cp.LastSeq != last || cp.BinlogPos != restored[last].EndPos {
		t.Fatalf("checkpoint %+v, last restored event %+v", cp, restored[last])
	}

	// status and archives show what is archived; archives --archive-url
	// finds the truncated file changed in the store.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"status"}, []string{"index size", "archived    4 hours"}},
		{[]string{"archives", "--archive-url", e.url}, []string{"4 hours archived", "differs", " ok ", truncated}},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dbtrail %v: %v\n%s", c.args, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Fatalf("dbtrail %v does not say %q:\n%s", c.args, w, out)
			}
		}
		t.Logf("dbtrail %v:\n%s", c.args, out)
	}

	// The CLI checks the location before it starts anything.
	before, err := e.c.DescribeWorkflowExecution(e.ctx, payload.ReindexWorkflowID("main"), "")
	must(t, err)
	firstRun := before.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	creds := filepath.Join(t.TempDir(), "credentials")
	must(t, os.WriteFile(creds, []byte("[default]\naws_access_key_id = "+e.s3.AccessKey+"\naws_secret_access_key = wrong\n"), 0o600))
	wrongKeys := withCredentials(t, e.url, creds)
	for _, c := range []struct{ url, want string }{
		{e.s3.BucketURL("missing", "arch"), `bucket "missing"`},
		{wrongKeys, "credentials"},
	} {
		// restore-index: the verb's name before issue 35, kept as an alias.
		cmd := exec.Command(bin, "restore-index", "--temporal-addr", e.frontend, "--archive-url", c.url)
		cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), c.want) {
			t.Fatalf("reindex --archive-url %s: %v\n%s", c.url, err, out)
		}
		t.Logf("reindex refused at start: %s", strings.TrimSpace(string(out)))
	}
	after, err := e.c.DescribeWorkflowExecution(e.ctx, payload.ReindexWorkflowID("main"), "")
	must(t, err)
	if got := after.GetWorkflowExecutionInfo().GetExecution().GetRunId(); got != firstRun {
		t.Fatalf("a restore run was started: %s", got)
	}
}

// damage rewrites a stored object with f of its bytes, as a disk or a
// person might, bypassing dbtrail's checks.
func (e *archiveEnv) damage(t *testing.T, name string, f func([]byte) []byte) {
	t.Helper()
	rc, err := e.remote.Open(e.ctx, name)
	must(t, err)
	b, err := io.ReadAll(rc)
	rc.Close()
	must(t, err)
	_, err = e.s3.Client().PutObject(e.ctx, &s3.PutObjectInput{Bucket: aws.String(e.s3.Bucket), Key: aws.String("arch/" + name),
		Body: bytes.NewReader(f(b))})
	must(t, err)
}

// withCredentials returns the store URL u with another credentials file.
func withCredentials(t *testing.T, u, file string) string {
	t.Helper()
	pu, err := url.Parse(u)
	must(t, err)
	q := pu.Query()
	q.Set("credentials-file", file)
	pu.RawQuery = q.Encode()
	return pu.String()
}
