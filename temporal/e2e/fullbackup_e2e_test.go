package e2e

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// backupEnv is a source with capture running into an index, an embedded
// Temporal server and a worker with the real activities.
type backupEnv struct {
	ctx    context.Context
	source *testsuite.Server
	src    *sql.DB
	store  *index.Store
	c      client.Client
	acts   *activities.Activities
	dir    string
	// frontend is the embedded server's address; indexDSN the index's.
	frontend string
	indexDSN string
	// index is the index server (shared unless withOwnIndex); capture the
	// `dbtrail capture` process under withCaptureProcess.
	index   *testsuite.Server
	capture *captureProc
}

type envOption func(*envOptions)

type envOptions struct {
	noWorker bool
	remote   storage.Store
	adHoc    bool
	ownIndex bool // an index server of the test's own (withOwnIndex)
	capProc  bool // capture as a process (withCaptureProcess)
}

// withAdHocTargets lets the worker restore into a DSN the CLI gives
// (--allow-ad-hoc-targets), its password file in the user's secrets folder.
func withAdHocTargets() envOption { return func(o *envOptions) { o.adHoc = true } }

// withoutWorker leaves running a worker to the test (e.g. as a process).
func withoutWorker() envOption { return func(o *envOptions) { o.noWorker = true } }

// withRemote gives the worker a remote store (as --archive-url does).
func withRemote(s storage.Store) envOption { return func(o *envOptions) { o.remote = s } }

func newBackupEnv(t *testing.T, opts ...envOption) *backupEnv {
	t.Helper()
	var o envOptions
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	e := &backupEnv{ctx: ctx, dir: t.TempDir()}
	e.source = testsuite.StartSource(t)
	var idx *testsuite.Server
	var indexDB string
	if o.ownIndex { // a server the test may kill: not the shared one
		idx, indexDB = testsuite.StartIndex(t), "dbtrail"
		must(t, idx.Exec(ctx, "CREATE DATABASE dbtrail"))
	} else {
		idx, indexDB = indexDatabase(t, ctx)
	}
	e.index = idx
	must(t, e.source.Exec(ctx, "CREATE DATABASE app"))
	var err error
	e.src, err = e.source.DB(ctx, "app")
	must(t, err)
	t.Cleanup(func() { e.src.Close() })
	e.indexDSN = idx.DSN(indexDB)
	e.store, err = index.Open(ctx, e.indexDSN)
	must(t, err)
	t.Cleanup(func() { e.store.Close() })
	must(t, e.store.Init(ctx))

	if o.capProc {
		e.capture = startCaptureProc(t, buildDbtrail(t), e)
	} else {
		cctx, stopCapture := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- capture.Run(cctx, capture.Config{Source: "main", SourceDSN: e.source.DSN(""),
				Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}, e.store)
		}()
		t.Cleanup(func() {
			stopCapture()
			if err := <-done; err != nil {
				t.Errorf("capture: %v", err)
			}
		})
	}

	srv, err := embedded.StartServer(ctx, embedded.ServerConfig{DataDir: filepath.Join(e.dir, "temporal"), FrontendAddr: "127.0.0.1:0"})
	must(t, err)
	t.Cleanup(srv.Stop)
	e.frontend = srv.FrontendAddr()
	e.c, err = temporalclient.Dial(ctx, srv.FrontendAddr(), srv.Namespace(), nil)
	must(t, err)
	t.Cleanup(e.c.Close)
	e.acts = &activities.Activities{
		Sources:   map[string]activities.Source{"main": {Name: "main", DSN: e.source.DSN("")}},
		Index:     e.store,
		BackupDir: filepath.Join(e.dir, "backups"),
		WorkDir:   filepath.Join(e.dir, "work"),
		DumpStall: 2 * time.Minute, // mydumper 0.10 has been seen to hang at start on a loaded machine
		Engines:   activities.NewEnginePool(filepath.Join(e.dir, "work"), ""),
		Remote:    o.remote,
		Targets:   &target.Set{},
	}
	if o.adHoc {
		e.acts.AdHocTargets = true
		e.acts.AdHocSecrets, err = target.SecretsDir()
		must(t, err)
	}
	t.Cleanup(func() { e.acts.Engines.Close() })
	if o.noWorker {
		return e
	}
	w := worker.New(e.c, payload.TaskQueue, workers.Options())
	workers.RegisterAll(w, e.acts)
	must(t, w.Start())
	t.Cleanup(w.Stop)
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *backupEnv) fullBackup(t *testing.T) workflows.FullBackupResult {
	t.Helper()
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.FullBackupWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main"})
	must(t, err)
	var res workflows.FullBackupResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("FullBackup: %v", err)
	}
	return res
}

// TestFullBackupEndToEnd: a source with every column type (its first dumped
// row holds the empty value of every type that has one) and a 200k-row
// table is backed up through the embedded server; every table read back
// from the published snapshot equals the live table, the manifest digests
// hold, and the workflow's history replays deterministically.
func TestFullBackupEndToEnd(t *testing.T) {
	e := newBackupEnv(t)
	_, err := e.src.ExecContext(e.ctx, "SET SESSION sql_mode = ''")
	must(t, err)
	for _, q := range []string{
		`CREATE TABLE kinds (id INT PRIMARY KEY, biu BIGINT UNSIGNED, bi BIGINT, d DECIMAL(65,30), dbl DOUBLE,
		  dt DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME(6), y YEAR, bn BINARY(8), vb VARBINARY(20), b64 BIT(64), b3 BIT(3),
		  t TEXT, lat VARCHAR(10) CHARACTER SET latin1, e ENUM('a','b'), s SET('x','y'), j JSON, u UUID, ip INET6, bl BLOB)`,
		`INSERT INTO kinds VALUES
		  (1, 18446744073709551615, -9223372036854775808, '-12345678901234567890123456789012345.123456789012345678901234567890', 1.7976931348623157e308,
		   '0000-00-00 00:00:00', '2038-01-19 03:14:07.999999', '-838:59:59', 2155, X'6162000000000000', X'00FF00', X'FFFFFFFFFFFFFFFF', b'101',
		   'quote '' backslash \\ newline \n emoji 😀', 'café', 'b', 'x,y', '{"n": 18446744073709551616}', '123e4567-e89b-12d3-a456-426614174000', '::ffff:1.2.3.4', X'000102'),
		  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		  (0, 0, 0, '0.000000000000000000000000000000', 0, '2026-11-29 08:00:00.000001', NULL, '00:00:00', 0, X'', X'', b'0', b'0', '', '', '', '', '[]', '00000000-0000-0000-0000-000000000000', '::', X'')`,
		`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(40), n BIGINT)`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq), seq * 7 FROM seq_1_to_200000`,
		`CREATE TABLE empty_t (id INT PRIMARY KEY)`,
		`CREATE VIEW v AS SELECT id FROM big`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	res := e.fullBackup(t)
	if res.Tables != 3 || res.Rows != 200003 || len(res.Skipped) != 1 {
		t.Fatalf("result %+v", res)
	}
	snap, err := snapshot.OpenCurrent(filepath.Join(e.acts.BackupDir, "main"))
	must(t, err)
	if snap.Manifest.SnapshotID != res.SnapshotID {
		t.Fatalf("current is %s, backup published %s", snap.Manifest.SnapshotID, res.SnapshotID)
	}
	must(t, snap.VerifyAll())
	for _, table := range []string{"kinds", "big", "empty_t"} {
		compareTable(t, e, snap, table)
	}
	// Every row was inserted (and captured) before the dump: the snapshot's
	// seq is that of the last of them.
	if res.Position.Seq != 200003 {
		t.Fatalf("snapshot seq %d, want 200003 (every captured insert is before the dump)", res.Position.Seq)
	}
	checkViews(t, e, snap, map[string]string{
		"big":   "id, pad, n",
		"kinds": "id, biu, bi, d, dt, ts, tm, t, lat, e, s, j, u, ip",
	})
	checkExportVerify(t, e, snap)
	replay(t, e, payload.FullBackupWorkflowID("main"))
}

// compareTable reads a table from the snapshot and from the live source in
// canonical form and requires the same rows.
func compareTable(t *testing.T, e *backupEnv, snap *snapshot.Snapshot, table string) {
	t.Helper()
	r, err := snap.OpenTable("app", table)
	must(t, err)
	defer r.Close()
	def := r.Table()
	got := map[string]bool{}
	for {
		row, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		img, err := rowimage.SQLImage(def, row)
		must(t, err)
		got[string(img)] = true
	}
	want := liveRows(t, e, def)
	if len(got) != len(want) {
		t.Fatalf("%s: snapshot has %d rows, live %d", table, len(got), len(want))
	}
	for img := range want {
		if !got[img] {
			t.Fatalf("%s: live row missing from the snapshot: %s", table, abbreviate(img))
		}
	}
}

func liveRows(t *testing.T, e *backupEnv, def *schema.Table) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for r := range liveCounts(t, e, def) {
		out[r] = true
	}
	return out
}

func abbreviate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// replay fetches a closed workflow's history and replays it against the
// current workflow code: a nondeterministic change fails here.
func replay(t *testing.T, e *backupEnv, workflowID string) {
	t.Helper()
	iter := e.c.GetWorkflowHistory(e.ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		must(t, err)
		hist.Events = append(hist.Events, ev)
	}
	if len(hist.Events) < 10 {
		t.Fatalf("history of %s has %d events", workflowID, len(hist.Events))
	}
	if err := newReplayer().ReplayWorkflowHistory(nil, hist); err != nil {
		t.Fatalf("replay %s: %v", workflowID, err)
	}
}
