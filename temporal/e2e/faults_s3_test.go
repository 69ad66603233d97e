package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// The S3 server stopped across the other steps that use it is proven by
// TestRemoteOutage (a refresh's snapshot upload: the run fails naming the
// upload, the snapshot stays local and current and unconfirmed, the next
// refresh uploads it first) and TestArchiveS3Down (an Archive run: no hour
// whose file is not confirmed leaves the index, the next run archives
// every hour once).

// TestFaultS3DownDuringReindex: four archived hours are restored into
// an empty index; the S3 server is killed once the first hour is restored,
// while the run goes on with the next, and restarted after a step has
// failed against it. The run completes after its retries: every archived
// event is in the restored index exactly once and byte-equal, the
// checkpoint is after the last of them, no gap and no failed file is
// recorded, and no downloaded file is left in the worker's folder.
func TestFaultS3DownDuringReindex(t *testing.T) {
	t.Parallel()        // a waiting test (retry backoff): see TestMain
	began := time.Now() // for the log only
	e := newArchiveEnv(t)
	base := time.Now().UTC().Truncate(time.Hour).Add(-30 * time.Hour)
	must(t, e.store.SplitPartitions(e.ctx, change.HourID(base)))
	bulkHours(t, e, newWorkload(71), base, 0, 4, 8000)
	if res := e.runArchive(t, 24); len(res.Hours) != 4 {
		t.Fatalf("archived %+v", res.Hours)
	}
	stored, _ := storedEvents(t, e.ctx, e.remote, "main")
	want := map[uint64]change.Event{}
	var last change.Event
	for _, ev := range stored {
		want[ev.Seq] = ev
		if ev.Seq > last.Seq {
			last = ev
		}
	}
	t.Logf("4 hours archived, %d events (%s)", len(want), time.Since(began).Round(time.Millisecond))

	storeB := e.otherIndex(t)
	const queue = "restore-b"
	e.queueWorker(t, storeB, queue)
	id := payload.ReindexWorkflowID("main")
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		workflows.Reindex, payload.ReindexInput{Source: "main"})
	must(t, err)
	e.waitRestoredHours(t, id, 1)
	must(t, e.s3.Kill())
	t.Logf("S3 server killed after the first hour (%s)", time.Since(began).Round(time.Millisecond))
	pa := e.waitActivity(t, id, "", failedOnce)
	if pa == nil {
		t.Fatal("the restore ended although the S3 server was down")
	}
	t.Logf("while the store is down: %s", describeFailure(pa))
	if !strings.Contains(pa.GetLastFailure().GetMessage(), e.s3.Endpoint) {
		t.Errorf("the failure does not name the store %s", e.s3.Endpoint)
	}
	must(t, e.s3.Restart(e.ctx))
	var res workflows.ReindexResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("Reindex across the S3 outage: %v", err)
	}
	t.Logf("restored %d hours, %d events; %s (%s)", res.Hours, res.Events, res.Outcome, time.Since(began).Round(time.Millisecond))
	if res.Hours != 4 || len(res.Failed) != 0 || len(res.Gaps) != 0 || res.LastSeq != last.Seq {
		t.Fatalf("restore result %+v; want 4 hours up to seq %d, nothing failed, no gap", res, last.Seq)
	}
	checkEveryEventOnce(t, want, values(indexEvents(t, e.ctx, storeB, "main")))
	if gaps, err := storeB.Gaps(e.ctx, "main"); err != nil || len(gaps) != 0 {
		t.Fatalf("gaps %+v (%v)", gaps, err)
	}
	cp, ok, err := storeB.LoadCheckpoint(e.ctx, "main")
	must(t, err)
	if !ok || cp.LastSeq != last.Seq || cp.BinlogFile != last.BinlogFile || cp.BinlogPos != last.EndPos {
		t.Fatalf("checkpoint %+v, last archived event %+v", cp, last)
	}
	left, err := os.ReadDir(filepath.Join(e.dir, queue, "main", "restore"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("downloads left in the worker's folder: %v", left)
	}
}

// waitRestoredHours waits until the restore run id reports n hours done.
func (e *archiveEnv) waitRestoredHours(t *testing.T, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if v, err := e.c.QueryWorkflow(e.ctx, id, "", payload.ProgressQuery); err == nil {
			var p payload.ReindexProgress
			if v.Get(&p) == nil && p.HoursDone >= n {
				if p.HoursDone == p.HoursTotal {
					t.Fatalf("every hour was restored before the S3 server could be killed (%+v)", p)
				}
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the restore never reported %d hours done", n)
}
