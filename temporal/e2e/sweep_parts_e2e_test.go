package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRefreshSweepsLeftoverParts: on a real S3 server (versitygw), parts
// left under <source>/parts/ by a run that no longer runs (Temporal does
// not know it) are deleted, with their owner record, by the next refresh,
// which says so in its result; the parts of a refresh that still runs (a
// Refresh run no worker serves) and parts without an owner record are
// kept. An orphan whose part Object Lock retains keeps its owner record
// and is reported as locked, not removed; an id whose owner record cannot
// be parsed is skipped and reported, and does not stop the sweep. Once
// the running run is over, the refresh after deletes its parts too.
func TestRefreshSweepsLeftoverParts(t *testing.T) {
	srv := testsuite.StartS3With(t, testsuite.S3Options{ObjectLock: true})
	e := newBackupEnv(t, withRemote(openS3(t, srv.URL("backups"), &s3Traffic{})), withoutWorker())
	e.acts.Runs = temporalclient.Runs{Client: e.c}
	w := worker.New(e.c, payload.TaskQueue, workers.Options())
	workers.RegisterAll(w, e.acts)
	must(t, w.Start())
	t.Cleanup(w.Stop)
	remoteTables(t, e, 1000)
	e.fullBackup(t)
	m := e.mirror(t)

	running, err := e.c.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{ID: "refresh-elsewhere", TaskQueue: "nobody-serves"}, "Refresh")
	must(t, err)
	t.Cleanup(func() { e.c.TerminateWorkflow(context.Background(), running.GetID(), running.GetRunID(), "test over") })
	const orphan, owned, ownerless, locked, garbled = "20200101T000000Z", "20200101T000001Z", "20200101T000002Z",
		"20200101T000003Z", "20200101T000004Z"
	ended := &snapshot.Owner{WorkflowID: payload.RefreshWorkflowID("main"), RunID: "0b9f4a8e-0000-4000-8000-000000000000"}
	leave := func(id string, o *snapshot.Owner) {
		if o != nil {
			must(t, m.PutPartsOwner(e.ctx, id, *o))
		}
		body := "parquet bytes of " + id
		must(t, e.acts.Remote.Put(e.ctx, m.PartName(id, "7-1", "app/big.parquet"), strings.NewReader(body), digest.Bytes([]byte(body))))
	}
	leave(orphan, ended)
	leave(owned, &snapshot.Owner{WorkflowID: running.GetID(), RunID: running.GetRunID()})
	leave(ownerless, nil)
	leave(locked, ended)
	lockedPart := m.PartName(locked, "7-1", "app/big.parquet")
	_, err = srv.Client().PutObjectRetention(e.ctx, &s3.PutObjectRetentionInput{Bucket: &srv.Bucket, Key: ptr("backups/" + lockedPart),
		Retention: &s3types.ObjectLockRetention{Mode: s3types.ObjectLockRetentionModeGovernance, RetainUntilDate: ptr(time.Now().Add(24 * time.Hour))}})
	must(t, err)
	leave(garbled, nil)
	must(t, e.acts.Remote.Put(e.ctx, "main/parts/"+garbled+".owner", strings.NewReader("garbage"), digest.Bytes([]byte("garbage"))))
	kept := func(r workflows.RefreshResult) bool {
		sw := r.SweptParts
		return slices.Equal(sw.Locked, []string{lockedPart}) && len(sw.Skipped) == 1 && sw.Skipped[0].ID == garbled &&
			strings.Contains(sw.Skipped[0].Reason, "not a run")
	}

	e.exec(t, "UPDATE small SET v = 'z' WHERE id = 2")
	r := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if r.SweptParts == nil || !slices.Equal(r.SweptParts.Removed, []string{orphan}) || r.SweptParts.Deleted != 2 || !kept(r) {
		t.Fatalf("first refresh swept %+v; want the orphan's part and owner record, %s locked, %s skipped", r.SweptParts, locked, garbled)
	}
	checkParts(t, e, m, map[string]bool{owned: true, ownerless: false, locked: true, garbled: false})

	must(t, e.c.TerminateWorkflow(e.ctx, running.GetID(), running.GetRunID(), "its refresh is over"))
	e.exec(t, "UPDATE small SET v = 'y' WHERE id = 1")
	r = e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if r.SweptParts == nil || !slices.Equal(r.SweptParts.Removed, []string{owned}) || !kept(r) {
		t.Fatalf("refresh after the owner ended swept %+v; want %s, %s locked again, %s skipped", r.SweptParts, owned, locked, garbled)
	}
	checkParts(t, e, m, map[string]bool{ownerless: false, locked: true, garbled: false})
	replay(t, e, payload.RefreshWorkflowID("main"))
}

// checkParts requires the store's parts folders to be exactly want's ids,
// each with one part and an owner record when want says so.
func checkParts(t *testing.T, e *backupEnv, m *remote.Mirror, want map[string]bool) {
	t.Helper()
	got, err := m.PartsFolders(e.ctx)
	must(t, err)
	if len(got) != len(want) {
		t.Fatalf("parts folders %+v, want %v", got, want)
	}
	for _, f := range got {
		owner, ok := want[f.ID]
		if !ok || f.Parts != 1 || (f.Owner != nil) != owner {
			t.Fatalf("parts folder %+v, want %v", f, want)
		}
	}
}
