package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	sdktest "go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// failureInputs holds, for every method of Activities, the input of a call
// that fails: with the fixture of TestErrorsWrappedOnce (a closed index, no
// snapshot, an unreachable source, an empty store) the zero input with
// Source "main" and SnapshotID/Prev set fails at its first I/O; breakers
// make it fail where it has no work to do. A new activity needs an entry
// here: the test enumerates the methods.
var failureInputs = map[string]any{
	"MapPosition":           calls.MapPositionInput{},
	"RemoveDump":            calls.RemoveDumpInput{Dir: "/elsewhere"},
	"PlanArchive":           calls.PlanArchiveInput{IndexHours: 24, Now: hour.Add(time.Hour)},
	"ArchiveHistory":        calls.ArchiveHistoryInput{},
	"ArchiveHour":           calls.ArchiveHourInput{Hour: hour},
	"DropEmptyPartitions":   calls.DropEmptyPartitionsInput{},
	"CompactTable":          calls.CompactTableInput{},
	"Prune":                 calls.PruneInput{},
	"Dump":                  calls.DumpInput{},
	"ExactFloats":           calls.ExactFloatsInput{},
	"PlanExport":            calls.PlanExportInput{},
	"ExportTable":           calls.ExportTableInput{Format: payload.ExportParquet},
	"RemoveExportStaging":   calls.RemoveStagingInput{Staging: "/tmp/x"},
	"FinishExport":          calls.FinishExportInput{},
	"LastPublisher":         calls.PublisherInput{},
	"RecordPublisher":       calls.RecordPublisherInput{},
	"PlanRefresh":           calls.PlanRefreshInput{},
	"RefreshTable":          calls.RefreshTableInput{},
	"LinkTables":            calls.LinkTablesInput{Tables: []calls.RefreshTableInput{{}}},
	"RefreshWorkers":        calls.RefreshWorkersInput{},
	"DiscardUnpublished":    calls.DiscardUnpublishedInput{},
	"SweepParts":            calls.SweepPartsInput{},
	"AdoptTable":            calls.AdoptTableInput{Result: calls.ConvertTableResult{File: "app/t.parquet", Size: 1, SHA256: "00"}},
	"UploadSnapshot":        calls.UploadSnapshotInput{},
	"DownloadCurrent":       calls.DownloadCurrentInput{},
	"PrepareReindex":        calls.PrepareReindexInput{},
	"ReindexHour":           calls.ReindexHourInput{Hour: hour},
	"RecordDrill":           calls.RecordDrillInput{},
	"FinishReindex":         calls.FinishReindexInput{},
	"LoadTable":             calls.LoadTableInput{},
	"PlanRestore":           calls.PlanRestoreInput{},
	"VerifyRestore":         calls.VerifyRestoreInput{},
	"EndRestore":            calls.EndRestoreInput{},
	"AllocateSnapshot":      calls.AllocateSnapshotInput{},
	"ConvertTable":          calls.ConvertTableInput{},
	"Publish":               calls.PublishInput{},
	"FinishPartial":         calls.FinishPartialInput{},
	"RemovePartial":         calls.RemovePartialInput{},
	"PublishRefresh":        calls.PublishRefreshInput{},
	"RemoveSnapshotStaging": calls.RemoveSnapshotStagingInput{},
	"SweepStaging":          "main",
	"VerifySnapshot":        calls.VerifySnapshotInput{},
	"WriteViews":            calls.WriteViewsInput{},
	"PlanRetention":         calls.RetentionInput{},
	"ApplyRetention":        calls.ApplyRetentionInput{Plan: retention.Plan{Items: []retention.Item{{Place: retention.PlaceLocal, ID: "20261201T000000Z"}}}},
}

// hour is the hour the archive's failure inputs name (a zero time would
// fail the SDK's encoding of the result before the activity's own error
// could be read).
var hour = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// breakers make the fixture fail for the activities that succeed on it as
// it is (an empty folder and store need no work): each changes its
// subtest's copy of the Activities and may complete the input v (a
// settable value of the activity's input type).
var breakers = map[string]func(t *testing.T, a *Activities, v reflect.Value){
	// A backup folder that is a regular file: nothing can be made in it.
	"AllocateSnapshot":      fileBackupDir,
	"Publish":               fileBackupDir,
	"FinishPartial":         fileBackupDir,
	"RemovePartial":         fileBackupDir,
	"RemoveSnapshotStaging": fileBackupDir,
	"SweepStaging": func(t *testing.T, a *Activities, _ reflect.Value) {
		fileBackupDir(t, a, reflect.Value{})
		a.Runs = noRuns{}
	},
	"Prune": func(t *testing.T, a *Activities, v reflect.Value) {
		fileBackupDir(t, a, v)
		a.Retention.KeepSnapshots = 1
	},
	// ApplyRetention reports a failed delete of one item in its result, by
	// design; it fails when the source folder cannot be locked.
	"ApplyRetention": fileBackupDir,
	// An unreachable source, reached once a dumped table has FLOAT values
	// to fix.
	"ExactFloats": func(t *testing.T, a *Activities, v reflect.Value) {
		dump := t.TempDir()
		must(t, os.WriteFile(filepath.Join(dump, "db.t-schema.sql"),
			[]byte("CREATE TABLE `t` (`id` int NOT NULL, `f` float, PRIMARY KEY (`id`)) ENGINE=InnoDB;\n"), 0o644))
		in := v.Addr().Interface().(*calls.ExactFloatsInput)
		in.DumpDir, in.Tables = dump, []calls.TableRef{{Schema: "db", Table: "t", SchemaFile: "db.t-schema.sql"}}
	},
	// A worker with a queue of its own whose backup folder is a file.
	"RefreshWorkers": func(t *testing.T, a *Activities, v reflect.Value) {
		fileBackupDir(t, a, v)
		a.Identity, a.Workers = "1@host", noWorkers{}
	},
	// A remote store that refuses every call.
	"DownloadCurrent":    refusingStore,
	"LastPublisher":      refusingStore,
	"DiscardUnpublished": refusingStore,
	"SweepParts": func(t *testing.T, a *Activities, v reflect.Value) {
		refusingStore(t, a, v)
		a.Runs = noRuns{}
	},
	"RecordPublisher": func(t *testing.T, a *Activities, v reflect.Value) {
		refusingStore(t, a, v)
		v.Addr().Interface().(*calls.RecordPublisherInput).Token = []byte("session")
	},
	// The same, with a published snapshot to upload.
	"UploadSnapshot": func(t *testing.T, a *Activities, v reflect.Value) {
		a.BackupDir = filepath.Join(t.TempDir(), "backups")
		publishDelta(t, a.sourceDir("main"), 10)
		refusingStore(t, a, v)
	},
}

// fileBackupDir makes a's backup folder a regular file.
func fileBackupDir(t *testing.T, a *Activities, _ reflect.Value) {
	a.BackupDir = filepath.Join(t.TempDir(), "backups")
	must(t, os.WriteFile(a.BackupDir, []byte("not a folder"), 0o644))
}

// refusingStore gives a a remote store whose folder became a regular file
// after it was opened: every call of it fails.
func refusingStore(t *testing.T, a *Activities, _ reflect.Value) {
	root := filepath.Join(t.TempDir(), "store")
	store, err := storage.NewLocal(root)
	must(t, err)
	must(t, os.Remove(root))
	must(t, os.WriteFile(root, []byte("not a folder"), 0o644))
	a.Remote = store
}

// noRuns is a RunChecker for which no run runs.
type noWorkers struct{}

func (noWorkers) LiveWorkers(context.Context, string) ([]string, error) { return nil, nil }

type noRuns struct{}

func (noRuns) Running(context.Context, string, string) (bool, error) { return false, nil }

// fill sets the empty string fields Source, SnapshotID and Prev of the
// struct in v (recursively) to the fixture's.
func fill(v reflect.Value) {
	if v.Kind() != reflect.Struct {
		return
	}
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Kind() == reflect.String && f.String() == "" && name == "Source":
			f.SetString("main")
		case f.Kind() == reflect.String && f.String() == "" && (name == "SnapshotID" || name == "Prev"):
			f.SetString(spaceID)
		case f.Kind() == reflect.Struct:
			fill(f)
		}
	}
}

// repeatedContext returns the first run of ": "-separated segments that
// appears twice in msg (a layer that added context a layer below had
// already added), or "".
func repeatedContext(msg string) string {
	segs := strings.Split(msg, ": ")
	for n := len(segs) / 2; n >= 1; n-- {
		seen := map[string]bool{}
		for i := 0; i+n <= len(segs); i++ {
			run := strings.Join(segs[i:i+n], ": ")
			if seen[run] {
				return run
			}
			seen[run] = true
		}
	}
	return ""
}

func TestRepeatedContext(t *testing.T) {
	for msg, want := range map[string]string{
		"build snapshot 20261201T224010Z: write shop/orders.000001.posdel: build snapshot 20261201T224010Z: write shop/orders.000001.upserts: no space left on device": "build snapshot 20261201T224010Z",
		"open snapshot x: read manifest.json: unexpected EOF": "",
		"x: y: x: y": "x: y",
	} {
		if got := repeatedContext(msg); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("repeatedContext(%q) = %q, want %q", msg, got, want)
		}
	}
}

// TestErrorsWrappedOnce drives the failure path of every activity (a closed
// index, no snapshot, an unreachable source, and through breakers a backup
// folder that is a file or a remote store that refuses) and refuses an
// error that says the same context twice: each layer adds only what the
// layers above it lack.
func TestErrorsWrappedOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := testsuite.StartIndex(t)
	if err := srv.Exec(ctx, "CREATE DATABASE dbtrail"); err != nil {
		t.Fatal(err)
	}
	store, err := index.Open(ctx, srv.DSN("dbtrail"))
	must(t, err)
	must(t, store.Init(ctx))
	store.Close() // every index call fails: "sql: database is closed"
	remoteDir := t.TempDir()
	remoteStore, err := storage.NewLocal(remoteDir)
	must(t, err)
	dir := t.TempDir()
	a := &Activities{Sources: map[string]Source{"main": {Name: "main", DSN: "u:p@tcp(127.0.0.1:1)/"}}, Index: store,
		BackupDir: filepath.Join(dir, "backups"), WorkDir: filepath.Join(dir, "work"), Remote: remoteStore, Log: quietLog(),
		Mydumper: filepath.Join(dir, "no-mydumper")}
	typ := reflect.TypeOf(a)
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		in, ok := failureInputs[m.Name]
		if !ok {
			t.Errorf("activity %s has no failure input in failureInputs", m.Name)
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			v := reflect.New(reflect.TypeOf(in)).Elem()
			v.Set(reflect.ValueOf(in))
			fill(v)
			b := *a
			if br := breakers[m.Name]; br != nil {
				br(t, &b, v)
			}
			var s sdktest.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivity(&b)
			_, err := env.ExecuteActivity(m.Name, v.Interface())
			if err == nil {
				t.Fatalf("%s with %+v succeeded on its failing fixture", m.Name, v.Interface())
			}
			// The activity's own error, without the SDK's wrapping.
			var app *temporal.ApplicationError
			if !errors.As(err, &app) {
				t.Fatalf("%s: %v is not an application error", m.Name, err)
			}
			msg := app.Message()
			if r := repeatedContext(msg); r != "" {
				t.Errorf("%s: %q says %q twice", m.Name, msg, r)
			}
			t.Logf("%s: %s", m.Name, msg)
		})
	}
}
