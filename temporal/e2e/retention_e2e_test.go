package e2e

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestRetentionScheduled: the past of pastEnv (six hours archived 40 hours
// ago to a bucket with Object Lock on, S0 and S1 only on the store, S2
// current) under the Retention workflow run by its schedule on a worker
// with --keep-snapshots 1 --archive-keep-days 1. The window's oldest moment
// (24 hours ago) is cut at the end of H5 and rebuilt from S2: S2 and the
// hours after it (H4, H5) are kept. S0 goes. S1's manifest and H0's file
// are retained by Object Lock: both deletes are reported, not fatal, and
// since S1 stays a base the hours after it (H2, H3) stay too; H1 goes.
// Then the window's oldest second still rebuilds equal to the source at
// that time, a moment from S1 still rebuilds exactly, and a moment in H0
// (its snapshot gone) is refused, never answered from a partial stream.
func TestRetentionScheduled(t *testing.T) {
	p := newPastEnvOn(t, testsuite.S3Options{ObjectLock: true})
	e := p.archiveEnv
	lock := func(name string) {
		t.Helper()
		key := path.Join("arch", name)
		_, err := e.s3.Client().PutObjectRetention(e.ctx, &s3.PutObjectRetentionInput{Bucket: &e.s3.Bucket, Key: &key,
			Retention: &s3types.ObjectLockRetention{Mode: s3types.ObjectLockRetentionModeGovernance, RetainUntilDate: ptr(time.Now().Add(24 * time.Hour))}})
		must(t, err)
	}
	s0, s1, s2 := p.snaps[0], p.snaps[1], p.snaps[2]
	hours := p.storedHours(t)
	lock(path.Join("main", snapshot.SnapshotsDir, s1, snapshot.ManifestName))
	lock(hours[0])

	must(t, jobs.EnsureSearchAttributes(e.ctx, e.c, temporalclient.DefaultNamespace))
	policy := retention.Policy{KeepSnapshots: 1, ArchiveKeepDays: 1}
	p.acts.Retention = policy // the worker's policy: the schedule carries none
	spec := temporalclient.ScheduleSpec{ID: payload.RetentionWorkflowID("main"), Every: time.Hour, Workflow: "Retention", TaskQueue: payload.TaskQueue,
		Args: []any{payload.RetentionInput{Source: "main"}}, Attrs: jobs.SourceAttrs("main")}
	must(t, temporalclient.EnsureSchedule(e.ctx, e.c, spec))
	defer temporalclient.DeleteSchedule(e.ctx, e.c, spec.ID)

	// What status shows before the run: a worker's plan with its own
	// policy, removing nothing.
	svc := jobs.New(jobs.Config{Client: e.c, Namespace: temporalclient.DefaultNamespace, TaskQueue: payload.TaskQueue})
	next, ok, err := svc.PreviewRetention(e.ctx, "main")
	must(t, err)
	wantNext := []string{"remote/" + s0, "remote/" + s1, "archive/" + hours[0], "archive/" + hours[1], "archive/" + hours[2], "archive/" + hours[3]}
	if !ok || next.Policy != policy || !slices.Equal(itemNames(next.Remove), wantNext) {
		t.Fatalf("next retention %v %+v, want it to remove %v", ok, itemNames(next.Remove), wantNext)
	}
	if left := p.storedHours(t); len(left) != pastHours {
		t.Fatalf("the preview removed something: %d hours stored", len(left))
	}
	var res calls.RetentionResult
	if err := triggerOnce(t, e.backupEnv, spec.ID).Get(e.ctx, &res); err != nil {
		t.Fatalf("scheduled retention: %v", err)
	}
	t.Logf("removed %v\nlocked %v\nheld %v\nfailed %v", itemNames(res.Removed), res.Locked, itemNames(res.Held), res.Failed)
	if want := []string{"remote/" + s0, "archive/" + hours[1]}; !slices.Equal(itemNames(res.Removed), want) {
		t.Fatalf("removed %v, want %v", itemNames(res.Removed), want)
	}
	if len(res.Locked) != 2 || res.Locked[0].ID != s1 || res.Locked[1].ID != hours[0] || len(res.Failed) != 0 ||
		!strings.Contains(res.Locked[0].Error, "object lock") {
		t.Fatalf("locked %+v failed %+v: want S1's manifest and H0's file refused by Object Lock", res.Locked, res.Failed)
	}
	if want := []string{"archive/" + hours[2], "archive/" + hours[3]}; !slices.Equal(itemNames(res.Held), want) {
		t.Fatalf("held %v, want %v (after S1, which stays)", itemNames(res.Held), want)
	}
	for _, it := range res.Plan.Items {
		if it.ID == s2 && !it.Keep {
			t.Fatalf("the plan removes the current snapshot: %+v", it)
		}
	}

	// What is left: S1 and S2 on the store, S2 locally; H0 (locked) and
	// H2..H5 recorded and stored, H1 neither.
	remoteIDs := p.remoteIDs(t)
	if !slices.Equal(remoteIDs, []string{s1, s2}) {
		t.Fatalf("remote snapshots %v, want %s %s", remoteIDs, s1, s2)
	}
	local, err := snapshot.ListSnapshots(filepath.Join(p.acts.BackupDir, "main"))
	must(t, err)
	if !slices.Equal(local, []string{s2}) {
		t.Fatalf("local snapshots %v, want %s", local, s2)
	}
	if left := p.storedHours(t); !slices.Equal(left, append([]string{hours[0]}, hours[2:]...)) {
		t.Fatalf("stored hours %v", left)
	}
	recs, err := p.store.Archives(p.ctx, "main")
	must(t, err)
	if len(recs) != pastHours-1 || recs[1].Hour != change.HourID(p.base.Add(2*time.Hour)) {
		t.Fatalf("%d archive records left, want all but H1's", len(recs))
	}

	// The window's oldest second: rebuilt from S2 and H4, H5 equal to the
	// source at that time (the last workload state of H5).
	past := p.pastWith(p.remote)
	oldest := res.Plan.WindowStart.Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	got, plan, err := p.rebuildPast(t, past, oldest)
	if err != nil {
		t.Fatalf("the window's oldest second %s: %v", oldest, err)
	}
	if plan.Base != s2 {
		t.Fatalf("%s rebuilt from %s, want %s", oldest, plan.Base, s2)
	}
	checkTruth(t, p.instantNamed(t, "H5 step 6"), oldest, plan, got)

	// A moment after S1 (kept by the lock) rebuilds exactly from it.
	in := p.instantNamed(t, "H2 step 3")
	at := in.form(t, 1, nil)
	got, plan, err = p.rebuildPast(t, past, at)
	if err != nil || plan.Base != s1 || plan.Cut.Seq != in.seq {
		t.Fatalf("%s (H2): base %s cut %s err %v, want from %s", at, plan.Base, plan.Cut, err, s1)
	}
	checkTruth(t, in, at, plan, got)

	// A moment in H0: S0 is gone, so it is refused (H0's file, locked,
	// is still there, but no snapshot before it is).
	in = p.instantNamed(t, "H0 step 3")
	_, _, err = p.rebuildPast(t, past, in.form(t, 1, nil))
	if r, ok := moment.IsRefused(err); !ok || r.Code != moment.CodeBeforeSnapshots {
		t.Fatalf("a moment in H0 after S0 was removed: %v, want refused %q", err, moment.CodeBeforeSnapshots)
	}
}

func ptr[T any](v T) *T { return &v }

// itemNames are "place/id" of items.
func itemNames(items []retention.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Place+"/"+it.ID)
	}
	return out
}

// storedHours are the names of the archive files on the store, oldest
// first.
func (p *pastEnv) storedHours(t *testing.T) []string {
	t.Helper()
	var out []string
	must(t, p.remote.List(p.ctx, "main/archives/", func(i storage.Info) error {
		out = append(out, i.Name)
		return nil
	}))
	return out
}

// remoteIDs are the ids of the complete snapshots on the store.
func (p *pastEnv) remoteIDs(t *testing.T) []string {
	t.Helper()
	var out []string
	must(t, p.remote.List(p.ctx, "main/snapshots/", func(i storage.Info) error {
		if id, file, ok := strings.Cut(strings.TrimPrefix(i.Name, "main/snapshots/"), "/"); ok && file == snapshot.ManifestName {
			out = append(out, id)
		}
		return nil
	}))
	return out
}
