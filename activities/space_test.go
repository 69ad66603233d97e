package activities

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/exportdir"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
	servers "github.com/dbtrail/dbtrail/testsuite"
)

const spaceID = "20261201T224010Z"

// publishDelta publishes snapshot spaceID of source main in dir with table
// db.t: a table file and a chain of two pairs, each file size bytes.
func publishDelta(t *testing.T, dir string, size int) *snapshot.Snapshot {
	t.Helper()
	b, err := snapshot.NewBuilder(dir, spaceID)
	must(t, err)
	mt := snapshot.ManifestTable{Schema: "db", Table: "t", File: "db/t.parquet", Kind: snapshot.KindDelta,
		Chain: []string{"db/t.000000.posdel", "db/t.000000.upserts", "db/t.000001.posdel", "db/t.000001.upserts"}}
	for i, rel := range append([]string{mt.File}, mt.Chain...) {
		_, err := b.WriteFile(rel, func(w io.Writer) error {
			_, err := w.Write([]byte(strings.Repeat(string(rune('a'+i)), size)))
			return err
		})
		must(t, err)
	}
	must(t, b.Publish(snapshot.Manifest{Source: "main", Position: binlogpos.Position{Seq: 7}, Kind: snapshot.SnapshotFull,
		Tables: []snapshot.ManifestTable{mt}}))
	s, err := snapshot.OpenSnapshot(snapshot.Folder(dir).Snapshot(spaceID))
	must(t, err)
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fakeFree is a probe reporting a settable free space.
type fakeFree struct{ free atomic.Uint64 }

func (f *fakeFree) probe(string) (uint64, error) { return f.free.Load(), nil }

// spaceStep is one writing step of TestSpaceCheckedFirst.
type spaceStep struct {
	name string
	// setup makes the step's fixture on a; it returns the folder the step
	// writes to and the need it should estimate.
	setup func(t *testing.T, a *Activities) (folder string, need uint64)
	run   func(env *testsuite.TestActivityEnvironment, a *Activities) error
	// written reports whether the step wrote anything.
	written func(a *Activities) bool
	// past is what the step's error says once past the check (its fixture
	// is no complete backup); "" is success.
	past string
}

// TestSpaceCheckedFirst: every writing step refuses, non-retryable NoRoom,
// when the folder it writes to has less than its estimate (saying what it
// needs, where and what is free), and writes nothing; with exactly that
// much it goes past the check. The estimates are those the docs state:
// the merged files of a compaction, the objects of a download (exact), the
// planned need of an export table, spaceneed.Text of the staged files for a
// .sql export.
func TestSpaceCheckedFirst(t *testing.T) {
	for _, st := range spaceSteps() {
		t.Run(st.name, func(t *testing.T) {
			for _, short := range []bool{true, false} {
				var probe fakeFree
				a := &Activities{BackupDir: filepath.Join(t.TempDir(), "backups"), WorkDir: t.TempDir(), Disk: probe.probe, Log: quietLog()}
				folder, need := st.setup(t, a)
				free := need
				if short {
					free--
				}
				probe.free.Store(free)
				var s testsuite.WorkflowTestSuite
				env := s.NewTestActivityEnvironment()
				env.RegisterActivity(a)
				err := st.run(env, a)
				var app *temporal.ApplicationError
				refused := errors.As(err, &app) && app.Type() == payload.ErrNoSpace
				if !short {
					if refused {
						t.Fatalf("refused with need+margin free: %v", err)
					}
					if st.past == "" && err != nil || st.past != "" && (err == nil || !strings.Contains(err.Error(), st.past)) {
						t.Fatalf("with need+margin free: %v; want %s", err, cmp.Or(st.past, "success"))
					}
					continue
				}
				want := "needs about " + disk.Bytes(need) + " in " + folder + " (" + disk.Bytes(free) + " free)"
				if !refused || !app.NonRetryable() || !strings.Contains(err.Error(), want) {
					t.Fatalf("with one byte too few: %v; want a non-retryable %s saying %q", err, payload.ErrNoSpace, want)
				}
				if st.written(a) {
					t.Errorf("the refused step wrote")
				}
			}
		})
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// onlyOnStore gives a a remote store holding snapshot spaceID of main
// (publishDelta with files of size bytes), which a's backup folder does
// not hold, and returns the bytes its download writes.
func onlyOnStore(t *testing.T, a *Activities, size int) uint64 {
	store, err := storage.NewLocal(t.TempDir())
	must(t, err)
	elsewhere := filepath.Join(t.TempDir(), "main")
	s := publishDelta(t, elsewhere, size)
	m, err := remote.New(store, "main", elsewhere, quietLog())
	must(t, err)
	_, err = m.Upload(t.Context(), spaceID, nil)
	must(t, err)
	mb, err := os.ReadFile(s.Path(snapshot.ManifestName))
	must(t, err)
	a.Remote = store
	return 5*uint64(size) + uint64(len(mb))
}

// spaceIndex is an empty index on an index server of its own.
func spaceIndex(t *testing.T) *index.Store {
	srv := servers.StartIndex(t)
	must(t, srv.Exec(t.Context(), "CREATE DATABASE room"))
	st, err := index.Open(t.Context(), srv.DSN("room"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	must(t, st.Init(t.Context()))
	return st
}

func spaceSteps() []spaceStep {
	const size = 1000
	staging := func(a *Activities) string { return filepath.Join(a.WorkDir, ".out"+exportdir.StagingSuffix) }
	return []spaceStep{
		{name: "compaction",
			setup: func(t *testing.T, a *Activities) (string, uint64) {
				publishDelta(t, a.sourceDir("main"), size)
				return a.sourceDir("main"), 4 * size
			},
			run: func(env *testsuite.TestActivityEnvironment, a *Activities) error {
				_, err := env.ExecuteActivity(a.CompactTable, calls.CompactTableInput{Source: "main", SnapshotID: spaceID, Schema: "db", Table: "t",
					Merge: []string{"db/t.000000.posdel", "db/t.000000.upserts", "db/t.000001.posdel", "db/t.000001.upserts"}})
				return err
			},
			written: func(a *Activities) bool { return exists(snapshot.Folder(a.sourceDir("main")).Compact()) },
			past:    "(type: " + payload.ErrBrokenSnapshot},
		{name: "download",
			setup: func(t *testing.T, a *Activities) (string, uint64) {
				return a.sourceDir("main"), onlyOnStore(t, a, size)
			},
			run: func(env *testsuite.TestActivityEnvironment, a *Activities) error {
				_, err := env.ExecuteActivity(a.DownloadCurrent, calls.DownloadCurrentInput{Source: "main"})
				return err
			},
			written: func(a *Activities) bool { return exists(snapshot.DownloadPath(a.sourceDir("main"), spaceID)) }},
		// An export at a moment whose base snapshot is only on the store:
		// the moment catalog downloads it into the backup folder.
		{name: "moment download",
			setup: func(t *testing.T, a *Activities) (string, uint64) {
				return a.sourceDir("main"), onlyOnStore(t, a, size)
			},
			run: func(env *testsuite.TestActivityEnvironment, a *Activities) error {
				_, err := env.ExecuteActivity(a.ExportTable, calls.ExportTableInput{Source: "main", Format: payload.ExportParquet, Staging: staging(a),
					Table: moment.TablePlan{Schema: "db", Table: "t", Snapshot: spaceID}})
				return err
			},
			written: func(a *Activities) bool { return exists(snapshot.DownloadPath(a.sourceDir("main"), spaceID)) },
			past:    "(type: " + payload.ErrBrokenSnapshot},
		{name: "export table",
			setup: func(t *testing.T, a *Activities) (string, uint64) { return staging(a), 5 << 20 },
			run: func(env *testsuite.TestActivityEnvironment, a *Activities) error {
				_, err := env.ExecuteActivity(a.ExportTable, calls.ExportTableInput{Source: "main", Format: payload.ExportParquet, Staging: staging(a),
					Table: moment.TablePlan{Schema: "db", Table: "t", Snapshot: spaceID}, Need: 5 << 20})
				return err
			},
			written: func(a *Activities) bool { return exists(filepath.Join(staging(a), "db")) },
			past:    "(type: " + payload.ErrSnapshotGone},
		{name: "sql export",
			setup: func(t *testing.T, a *Activities) (string, uint64) {
				must(t, os.MkdirAll(staging(a), 0o755))
				return a.WorkDir, spaceneed.Text(spaceneed.Table{File: size}).Bytes
			},
			run: func(env *testsuite.TestActivityEnvironment, a *Activities) error {
				_, err := env.ExecuteActivity(a.FinishExport, calls.FinishExportInput{Spec: payload.ExportSpec{Source: "main", Format: payload.ExportSQL, Out: filepath.Join(a.WorkDir, "out.sql")},
					Staging: staging(a), RunID: "r", Tables: []calls.ExportTableResult{{Schema: "db", Table: "t", Files: []calls.ExportFile{{Path: "db/t.parquet", Size: size}}}}})
				return err
			},
			written: func(a *Activities) bool { return exists(filepath.Join(a.WorkDir, "out.sql")) },
			past:    "open table file: "},
	}
}

// TestExportNeed: a .sql export needs its staged files and the text
// besides them; a folder export its files.
func TestExportNeed(t *testing.T) {
	jobs := []calls.ExportTableInput{{Need: 100}, {Need: 23}}
	if got := exportNeed(payload.ExportParquet, jobs); got != spaceneed.Exact(123) {
		t.Errorf("parquet export need %+v, want 123", got)
	}
	if got := exportNeed(payload.ExportSQL, jobs); got != spaceneed.Exact(123*(1+spaceneed.Expansion)) {
		t.Errorf("sql export need %+v, want %d", got, 123*(1+spaceneed.Expansion))
	}
	if got := exportNeed(payload.ExportParquet, append(jobs, calls.ExportTableInput{})); got.Sure {
		t.Errorf("an export with a table not estimated: %+v, want not sure", got)
	}
}

// TestNotSureWrites: an estimate that is not Sure is not refused on, even
// with no room at all: the step writes and fails cleanly if the folder
// fills (noSpace).
func TestNotSureWrites(t *testing.T) {
	var probe fakeFree
	a := &Activities{Disk: probe.probe}
	if err := a.checkSpace(t.TempDir(), spaceneed.Changes(), "export changes of db.t"); err != nil {
		t.Fatalf("not sure, no room: %v; want no refusal", err)
	}
	err := noSpace(fmt.Errorf("build snapshot x: write db/t.parquet: %w", syscall.ENOSPC), "/backups/main", "pair db.t")
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != payload.ErrNoSpace || !app.NonRetryable() ||
		!strings.Contains(err.Error(), "pair db.t: no space left in /backups/main: build snapshot x: write db/t.parquet") {
		t.Fatalf("ENOSPC: %v; want a non-retryable %s naming the folder and the file", err, payload.ErrNoSpace)
	}
	if other := errors.New("x"); noSpace(other, "/b", "y") != other {
		t.Fatal("another error is changed by noSpace")
	}
}

// TestDownloadRecordsSpace: DownloadCurrent's result records its room, kind
// download: the objects it needed, exactly, and the bytes it downloaded —
// the same.
func TestDownloadRecordsSpace(t *testing.T) {
	var probe fakeFree
	probe.free.Store(1 << 40)
	a := &Activities{BackupDir: filepath.Join(t.TempDir(), "backups"), WorkDir: t.TempDir(), Disk: probe.probe, Log: quietLog()}
	need := onlyOnStore(t, a, 1000)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.DownloadCurrent, calls.DownloadCurrentInput{Source: "main"})
	must(t, err)
	var res calls.DownloadCurrentResult
	must(t, v.Get(&res))
	want := spaceneed.Step{Kind: "download", Estimate: need, Sure: true, Written: need}
	if res.SnapshotID != spaceID || res.Space == nil || *res.Space != want {
		t.Fatalf("download of %s: %+v, room %+v; want %+v", res.SnapshotID, res, res.Space, want)
	}
}
