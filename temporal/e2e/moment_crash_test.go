package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/exportdir"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestExportSurvivesWorkerKill kills the worker process with SIGKILL while
// it rebuilds a 1,000,000-row table at a moment (250,000 changes after its
// snapshot); a new worker finishes the export, nothing appears under the
// output name before, and the export equals an uninterrupted one of the
// same moment: the same tables, rows and fingerprints, the same cut.
func TestExportSurvivesWorkerKill(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	for _, q := range []string{
		`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq * 7 FROM seq_1_to_1000000`,
		`CREATE TABLE small (k VARCHAR(10) PRIMARY KEY, v INT)`,
		`INSERT INTO small VALUES ('a', 1), ('b', 2)`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	w1 := startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	for _, q := range []string{
		`UPDATE big SET n = n + 1, pad = 'changed' WHERE id % 4 = 0`,
		`DELETE FROM big WHERE id % 1000 = 1`,
		`UPDATE small SET v = 3 WHERE k = 'a'`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	e.waitCaughtUp(t)
	cp, _, err := e.store.LoadCheckpoint(e.ctx, "main")
	must(t, err)
	at := "seq:" + strconv.FormatUint(cp.LastSeq, 10)
	dir := t.TempDir()
	out := filepath.Join(dir, "killed")
	spec := payload.ExportSpec{Source: "main", Format: payload.ExportParquet, At: at, Out: out}
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.ExportWorkflowID("main", out), TaskQueue: payload.TaskQueue},
		workflows.Export, payload.ExportInput{ExportSpec: spec, Parallel: 1})
	must(t, err)
	// Tables are exported one at a time in name order: the first
	// ExportTable is app.big's.
	if k := killInStep(t, e, w1, run.GetID(), run.GetRunID(), "ExportTable"); !k.Killed || !k.Landed {
		t.Fatalf("the kill did not land in ExportTable of app.big: %+v", k)
	}
	t.Logf("worker killed while it rebuilt app.big")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("%s exists before the export finished", out)
	}
	startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	var killed workflows.ExportResult
	if err := run.Get(e.ctx, &killed); err != nil {
		t.Fatalf("Export after the kill: %v", err)
	}
	again, err := e.export(t, payload.ExportSpec{Format: payload.ExportParquet, At: at, Out: filepath.Join(dir, "whole")})
	must(t, err)
	if killed.Plan.Plan.Cut.Seq != again.Plan.Plan.Cut.Seq || killed.Rows != again.Rows || killed.Rows != 1000000-1000+2 {
		t.Fatalf("killed run: cut %d, %d rows; uninterrupted: cut %d, %d rows", killed.Plan.Plan.Cut.Seq, killed.Rows, again.Plan.Plan.Cut.Seq, again.Rows)
	}
	for _, tb := range []string{"big", "small"} {
		a := footer(t, filepath.Join(out, "app", tb+".parquet"))
		b := footer(t, filepath.Join(dir, "whole", "app", tb+".parquet"))
		if a.Rows != b.Rows || a.Fingerprint != b.Fingerprint || a.Position != b.Position {
			t.Fatalf("%s: interrupted %d rows %s at %+v, uninterrupted %d rows %s at %+v", tb, a.Rows, a.Fingerprint, a.Position, b.Rows, b.Fingerprint, b.Position)
		}
	}
	var m calls.ExportManifest
	b, err := os.ReadFile(filepath.Join(out, activities.ExportManifestName))
	must(t, err)
	must(t, json.Unmarshal(b, &m))
	if len(m.Tables) != 2 || m.Cut == nil || m.Cut.Seq != cp.LastSeq {
		t.Fatalf("export.json of the killed run: %s", b)
	}
	ents, err := os.ReadDir(dir)
	must(t, err)
	for _, en := range ents {
		if strings.HasSuffix(en.Name(), exportdir.StagingSuffix) {
			t.Fatalf("a staging folder is left: %s", en.Name())
		}
	}
}

func footer(t *testing.T, path string) snapshot.FooterMeta {
	t.Helper()
	f, err := snapshot.ReadFooter(path)
	must(t, err)
	return f
}
