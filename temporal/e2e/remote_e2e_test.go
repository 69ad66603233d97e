package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// remoteTables creates app.big (rows rows), app.small and app.quiet.
func remoteTables(t *testing.T, e *backupEnv, rows int) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 30)), seq * 7 FROM seq_1_to_` + strconv.Itoa(rows),
		`CREATE TABLE small (id INT PRIMARY KEY, v VARCHAR(10))`,
		`INSERT INTO small VALUES (1, 'a'), (2, 'b'), (3, 'c')`,
		`CREATE TABLE quiet (id INT PRIMARY KEY)`,
		`INSERT INTO quiet VALUES (1), (2)`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	e.waitCaughtUp(t)
}

func (e *backupEnv) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	_, err := e.src.ExecContext(e.ctx, q, args...)
	must(t, err)
	e.waitCaughtUp(t)
}

// execAll runs statements on the source, in order.
func (e *backupEnv) execAll(t *testing.T, qs ...string) {
	t.Helper()
	for _, q := range qs {
		e.exec(t, q)
	}
}

// TestRemoteUploadAndDownload: with a remote store on a real S3 server
// (versitygw), a full backup and two refreshes go up: every remote file's
// sha256 matches its manifest and the remote current is the local one. A
// refresh that changed one row sends only the new pair and the manifest
// and finds the rest in the bucket by content, copying nothing (counted by
// the activity and by the HTTP traffic). Then the local backup folder is deleted: the next
// refresh downloads the previous snapshot with its chains, pairs on it,
// equals the live tables, and uploads only its new pair.
func TestRemoteUploadAndDownload(t *testing.T) {
	srv := testsuite.StartS3(t)
	traffic := &s3Traffic{}
	e := newBackupEnv(t, withRemote(openS3(t, srv.URL("backups"), traffic)))
	m := e.mirror(t)
	eng := newEngine(t)
	remoteTables(t, e, 100000)

	fb := e.fullBackup(t)
	st := uploadOf(t, fb.Upload, fb.SnapshotID)
	if cur := e.current(t); st.Copied != 0 || st.Uploaded != distinctFiles(cur)+1 || st.Files != len(cur.Manifest.Files)+1 {
		t.Fatalf("full backup upload %+v: want each distinct content (%d of %d files) and the manifest sent once", st, distinctFiles(cur), len(cur.Manifest.Files))
	}
	checkRemote(t, e, m)
	traffic.takePutBytes()

	e.exec(t, "UPDATE big SET pad = 'changed' WHERE id = 777")
	r1 := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	sent, tableFile := checkPairUpload(t, e, r1, "big")
	httpSent := traffic.takePutBytes()
	ratio := float64(sent) / float64(tableFile)
	t.Logf("refresh of 1 changed row: %d bytes uploaded (pair and manifest; %d bytes in PUT bodies), table file %d bytes: ratio %.5f",
		sent, httpSent, tableFile, ratio)
	if ratio > 0.02 {
		t.Fatalf("a refresh of one row sent %d bytes for a table file of %d", sent, tableFile)
	}
	if httpSent < sent || httpSent > sent+4096 {
		t.Fatalf("PUT bodies carried %d bytes, the upload counted %d sent", httpSent, sent)
	}
	checkRemote(t, e, m)

	e.exec(t, "UPDATE small SET v = 'z' WHERE id = 2")
	r2 := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	checkPairUpload(t, e, r2, "small")
	if ids := checkRemote(t, e, m); !slices.Equal(ids, []string{fb.SnapshotID, r1.SnapshotID, r2.SnapshotID}) {
		t.Fatalf("remote snapshots %v", ids)
	}

	// The folder is lost: the next refresh starts from the remote current.
	must(t, os.RemoveAll(filepath.Join(e.acts.BackupDir, "main")))
	e.exec(t, "UPDATE big SET n = -1 WHERE id IN (5, 50000)")
	e.exec(t, "DELETE FROM small WHERE id = 3")
	r3 := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if r3.Downloaded != r2.SnapshotID || r3.Prev != r2.SnapshotID || r3.Refused {
		t.Fatalf("refresh after the folder was lost: %+v", r3)
	}
	snap := e.current(t)
	for _, table := range []string{"big", "small"} {
		mt, _ := snap.Manifest.Table("app", table)
		if mt.Origin != snapshot.OriginPair || len(mt.Chain) != map[string]int{"big": 6, "small": 6}[table] {
			t.Fatalf("%s after the download: %s, chain %v (want a pair on the downloaded chain)", table, mt.Origin, mt.Chain)
		}
	}
	checkLive(t, e, eng, snap, "refresh on a downloaded snapshot")
	st = uploadOf(t, r3.Upload, r3.SnapshotID)
	if st.Uploaded != 5 || st.Skipped != st.Files-5 || st.Copied != 0 {
		t.Fatalf("upload after the download %+v: want two pairs and the manifest sent, the rest found by content", st)
	}
	checkRemote(t, e, m)
	replay(t, e, payload.RefreshWorkflowID("main"))
}

// TestRemoteObjectLock: the same on a bucket with Object Lock and a
// default retention: uploads, server-side copies and pointer swaps need no
// delete, and local retention still removes confirmed local snapshots.
func TestRemoteObjectLock(t *testing.T) {
	srv := testsuite.StartS3With(t, testsuite.S3Options{ObjectLock: true, RetentionDays: 1})
	traffic := &s3Traffic{}
	e := newBackupEnv(t, withRemote(openS3(t, srv.URL("locked"), traffic)))
	m := e.mirror(t)
	remoteTables(t, e, 20000)
	fb := e.fullBackup(t)
	checkRemote(t, e, m)
	e.exec(t, "UPDATE big SET pad = 'changed' WHERE id = 7")
	r1 := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	checkPairUpload(t, e, r1, "big")
	e.exec(t, "UPDATE small SET v = 'y' WHERE id = 1")
	e.acts.Retention = retention.Policy{KeepSnapshots: 1} // the worker's policy from now on
	r2 := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	checkPairUpload(t, e, r2, "small")
	if !slices.Equal(r2.Pruned, []string{fb.SnapshotID, r1.SnapshotID}) {
		t.Fatalf("pruned %v", r2.Pruned)
	}
	if ids := checkRemote(t, e, m); !slices.Equal(ids, []string{fb.SnapshotID, r1.SnapshotID, r2.SnapshotID}) {
		t.Fatalf("remote snapshots %v", ids)
	}
	if n := traffic.deleteCount(); n != 0 {
		t.Fatalf("%d DELETE requests", n)
	}
}

// TestRemoteOutage: the S3 server is killed in the middle of a refresh's
// upload. The run fails (after the attempt limit) naming the upload; the
// snapshot stays local and current, nothing is pruned, the remote current
// stays on the full backup. After a restart the next refresh uploads the
// missed snapshot first, then its own, and retention then removes the
// confirmed older local snapshots.
func TestRemoteOutage(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	srv := testsuite.StartS3(t)
	traffic := &s3Traffic{}
	e := newBackupEnv(t, withRemote(openS3(t, srv.URL("backups"), traffic)))
	m := e.mirror(t)
	remoteTables(t, e, 20000)
	fb := e.fullBackup(t)
	checkRemote(t, e, m)

	e.exec(t, "UPDATE big SET pad = 'changed' WHERE id = 7")
	e.acts.Retention = retention.Policy{KeepSnapshots: 1}
	traffic.armKill(3, func() {
		if err := srv.Kill(); err != nil {
			t.Errorf("kill versitygw: %v", err)
		}
	})
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RefreshWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	must(t, err)
	err = run.Get(e.ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "upload snapshot") || !strings.Contains(err.Error(), srv.Endpoint) {
		t.Fatalf("refresh with the store down: %v", err)
	}
	t.Logf("refresh with the store down failed: %v", errors.Unwrap(err))
	dir := filepath.Join(e.acts.BackupDir, "main")
	local, err := snapshot.ListSnapshots(dir)
	must(t, err)
	cur, err := snapshot.ResolveCurrent(dir)
	must(t, err)
	if len(local) != 2 || local[0] != fb.SnapshotID || cur != local[1] {
		t.Fatalf("local snapshots %v, current %s: want the full backup and the refresh, both kept", local, cur)
	}
	missed := local[1]
	if ok, _ := m.Confirmed(missed); ok {
		t.Fatal("the refresh is confirmed although its upload failed")
	}

	must(t, srv.Restart(e.ctx))
	if rcur, err := m.Current(e.ctx); err != nil || rcur != fb.SnapshotID {
		t.Fatalf("remote current %s (%v), want the full backup's", rcur, err)
	}
	e.exec(t, "UPDATE small SET v = 'x' WHERE id = 3")
	r := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if len(r.Upload.Snapshots) != 2 || r.Upload.Snapshots[0].SnapshotID != missed || r.Upload.Snapshots[1].SnapshotID != r.SnapshotID {
		t.Fatalf("catch-up upload %+v", r.Upload.Snapshots)
	}
	if !slices.Equal(r.Pruned, []string{fb.SnapshotID, missed}) {
		t.Fatalf("pruned %v", r.Pruned)
	}
	if ids := checkRemote(t, e, m); !slices.Equal(ids, []string{fb.SnapshotID, missed, r.SnapshotID}) {
		t.Fatalf("remote snapshots %v", ids)
	}
}
