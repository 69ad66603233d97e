package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestMomentFromRemote: with snapshots on a real S3 server (versitygw), the
// local backup folder is deleted; an export of a moment between the full
// backup and a refresh lists the snapshots on the store, downloads the one
// it starts from (its files checked), and equals the tables recorded at
// that moment.
func TestMomentFromRemote(t *testing.T) {
	srv := testsuite.StartS3(t)
	e := newBackupEnv(t, withRemote(openS3(t, srv.URL("backups"), &s3Traffic{})))
	w := newWorkload(21)
	w.setup(t, e, 30)
	e.waitCaughtUp(t)
	rec := &recorder{t: t, e: e, defs: map[string]*schema.Table{}}
	rec.refreshDefs()
	e.fullBackup(t)
	w.step(t, e, 6)
	e.waitCaughtUp(t)
	then := rec.now("between the full backup and the refresh")
	w.step(t, e, 6)
	e.waitCaughtUp(t)
	if res := e.refresh(t, payload.RefreshInput{TableDeltas: true}); res.Refused {
		t.Fatalf("refresh refused: %v", res.Reasons)
	}
	sourceDir := filepath.Join(e.acts.BackupDir, "main")
	must(t, os.RemoveAll(sourceDir))
	out := filepath.Join(t.TempDir(), "then")
	res, err := e.export(t, payload.ExportSpec{Format: payload.ExportParquet, At: then.at[0], Out: out})
	must(t, err)
	t.Logf("exported %s from snapshot %s (downloaded), cut %s", then.at[0], res.Plan.Plan.Base, res.Plan.Plan.Cut)
	if _, err := os.Stat(filepath.Join(snapshot.Folder(sourceDir).Snapshot(res.Plan.Plan.Base), snapshot.ManifestName)); err != nil {
		t.Fatalf("the base snapshot was not downloaded: %v", err)
	}
	for _, tb := range modelTables {
		r, err := snapshot.OpenTableFile(filepath.Join(out, "app", tb+".parquet"))
		must(t, err)
		got := readImages(t, r)
		r.Close()
		if err := sameRows(got, then.truth[tb]); err != nil {
			t.Fatalf("%s at %s from the store: %v", tb, then.at[0], err)
		}
	}
}
