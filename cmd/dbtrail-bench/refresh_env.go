package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	tlog "go.temporal.io/sdk/log"
	temporaltest "go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/testsuite"
)

// startRefreshEnv starts an index server with a fresh database
// bench_<name>, a temporary folder dir and activities over both (a fold
// engine pool in dir/work), for the refresh and moment benchmarks. stop
// releases everything; on error nothing is left.
func startRefreshEnv(ctx context.Context, name string) (env *refreshEnv, dir string, stop func(), err error) {
	var undo []func()
	stop = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	if err = testsuite.Install(ctx); err != nil {
		return
	}
	idx, err := testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleIndex})
	if err != nil {
		return
	}
	undo = append(undo, func() { idx.Stop() })
	db := "bench_" + name
	if err = idx.Exec(ctx, "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db); err != nil {
		return
	}
	dsn := idx.DSN(db)
	store, err := index.Open(ctx, dsn)
	if err != nil {
		return
	}
	undo = append(undo, func() { store.Close() })
	if err = store.Init(ctx); err != nil {
		return
	}
	if dir, err = os.MkdirTemp("", "dbtrail-bench-"+name+"-"); err != nil {
		return
	}
	undo = append(undo, func() { os.RemoveAll(dir) })
	def, create, err := refreshDefinition(dir)
	if err != nil {
		return
	}
	work := filepath.Join(dir, "work")
	env = &refreshEnv{idx: idx, store: store, dsn: dsn, def: def, create: create,
		acts: &activities.Activities{Index: store, BackupDir: filepath.Join(dir, "backup"),
			WorkDir: work, FoldMemory: refreshFoldMemory, Sources: map[string]activities.Source{},
			Engines:   activities.NewEnginePool(work, refreshFoldMemory),
			Retention: retention.Policy{KeepSnapshots: retention.DefaultKeepSnapshots}}} // a worker's default policy
	undo = append(undo, func() { env.acts.Engines.Close() })
	return env, dir, stop, nil
}

// refreshEnv is what every refresh run shares: the index, the activities and
// the table's definition.
type refreshEnv struct {
	idx    *testsuite.Server
	store  *index.Store
	dsn    string
	acts   *activities.Activities
	def    *schema.Table
	create string
	runs   int // snapshot ids handed out so far
}

// refreshFixture is one table of n rows with a published previous snapshot and
// its changes in the index, one window per size.
type refreshFixture struct {
	n       int
	source  string
	mt      snapshot.ManifestTable
	links   []foldplan.Link
	size    int64 // bytes of the table file
	nextSeq uint64
	windows map[int]refreshWindow
}

// refreshWindow is a seq range (prevSeq, cut] holding k update events of k
// distinct rows of one table.
type refreshWindow struct {
	k            int
	prevSeq, cut uint64
	endPos       uint64
}

// refreshDefinition parses refreshDDL as a dump's schema file.
func refreshDefinition(dir string) (*schema.Table, string, error) {
	f := filepath.Join(dir, "app.t-schema.sql")
	if err := os.WriteFile(f, []byte(refreshDDL), 0o600); err != nil {
		return nil, "", err
	}
	defer os.Remove(f)
	return dumpconv.Definition(os.DirFS(dir), refreshSchema, refreshTable, "app.t-schema.sql")
}

// refreshRow is row id of the table, in AppendSQL's form; version > 0 gives
// the row as the version-th update left it.
func refreshRow(buf []byte, id, version int) []rowimage.Cell {
	buf = buf[:0]
	var ends [4]int
	buf = strconv.AppendInt(buf, int64(id), 10)
	ends[0] = len(buf)
	if version == 0 {
		buf = fmt.Appendf(buf, "name-%d-%08x", id, uint32(id)*2654435761)
	} else {
		buf = fmt.Appendf(buf, "updated-%d-v%d", id, version)
	}
	ends[1] = len(buf)
	buf = strconv.AppendInt(buf, int64(id%1000003)*7+int64(version), 10)
	ends[2] = len(buf)
	buf = strconv.AppendFloat(buf, float64(id)*1.5+float64(version)*0.25, 'g', -1, 64)
	ends[3] = len(buf)
	return []rowimage.Cell{rowimage.TextCell(buf[:ends[0]]), rowimage.TextCell(buf[ends[0]:ends[1]]),
		rowimage.TextCell(buf[ends[1]:ends[2]]), rowimage.TextCell(buf[ends[2]:ends[3]])}
}

// buildTable publishes source bench-<n>'s previous snapshot: a table file of
// n rows and its empty 000000 pair, at seq 0.
func (e *refreshEnv) buildTable(n int) (*refreshFixture, error) {
	return e.buildSource(fmt.Sprintf("bench-%d", n), n)
}

// buildSource is buildTable for a source named source.
func (e *refreshEnv) buildSource(source string, n int) (*refreshFixture, error) {
	tb := &refreshFixture{n: n, source: source, nextSeq: 1, windows: map[int]refreshWindow{}}
	b, err := snapshot.NewBuilder(e.sourceDir(tb.source), refreshPrevID)
	if err != nil {
		return nil, err
	}
	pos := binlogpos.Position{File: refreshBinlog, Pos: 4}
	rel, err := snapshot.TableFile(refreshSchema, refreshTable)
	if err != nil {
		return nil, err
	}
	var res snapshot.WriteResult
	digest, err := b.WriteFile(rel, func(w io.Writer) error {
		tw, err := snapshot.NewTableWriter(w, e.def, snapshot.FooterMeta{CreateTable: e.create, Position: pos,
			SnapshotID: refreshPrevID, Source: tb.source}, snapshot.WriterOptions{})
		if err != nil {
			return err
		}
		var buf []byte
		for id := 1; id <= n; id++ {
			row := refreshRow(buf, id, 0)
			buf = row[0].Text[:0]
			if err := tw.AppendSQL(row); err != nil {
				return err
			}
		}
		res, err = tw.Close()
		return err
	})
	if err != nil {
		return nil, err
	}
	chain, err := snapshot.WriteEmptyChainStart(b, e.def)
	if err != nil {
		return nil, err
	}
	tb.mt = snapshot.ManifestTable{Schema: refreshSchema, Table: refreshTable, File: rel, Rows: res.Rows,
		Fingerprint: res.Fingerprint, Chain: chain, Kind: snapshot.KindDelta, Origin: snapshot.OriginDump}
	if err := b.Publish(snapshot.Manifest{Source: tb.source, Position: pos, Kind: snapshot.SnapshotFull,
		Tables: []snapshot.ManifestTable{tb.mt}}); err != nil {
		return nil, err
	}
	files := b.Files()
	tb.size = digest.Size
	for _, p := range append([]string{rel}, chain...) {
		tb.links = append(tb.links, foldplan.Link{Dst: p, Src: p, Digest: files[p]})
	}
	return tb, nil
}

func (e *refreshEnv) sourceDir(source string) string { return filepath.Join(e.acts.BackupDir, source) }

// insertWindow commits k update events of k distinct rows, spread over the
// table, after the table's last window, in transactions of 5,000 events.
// They are committed now.
func (e *refreshEnv) insertWindow(ctx context.Context, tb *refreshFixture, k int) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return e.insertWindowAt(ctx, tb, k, func(int) time.Time { return now })
}

// insertWindowAt is insertWindow whose i-th event (from 0) commits at
// commit(i), a time of microseconds.
func (e *refreshEnv) insertWindowAt(ctx context.Context, tb *refreshFixture, k int, commit func(i int) time.Time) error {
	w := refreshWindow{k: k, prevSeq: tb.nextSeq - 1}
	stride := max(tb.n/k, 1)
	version := len(tb.windows) + 1
	const batch = 5000
	evs := make([]change.Event, 0, batch)
	flush := func() error {
		err := e.commitEvents(ctx, tb.source, evs)
		evs = evs[:0]
		return err
	}
	for i := range k {
		id := 1 + (i*stride)%tb.n
		ev, err := e.updateEvent(tb.nextSeq, commit(i), refreshTable, id, 0, version)
		if err != nil {
			return err
		}
		tb.nextSeq++
		w.endPos = ev.EndPos
		evs = append(evs, ev)
		if len(evs) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	w.cut = tb.nextSeq - 1
	tb.windows[k] = w
	return nil
}

// updateEvent is the update of row id of app.<table> from its version
// from to its version to (refreshRow's), at seq, committed at at.
func (e *refreshEnv) updateEvent(seq uint64, at time.Time, table string, id, from, to int) (change.Event, error) {
	before, err := rowimage.SQLImage(e.def, refreshRow(nil, id, from))
	if err != nil {
		return change.Event{}, err
	}
	after, err := rowimage.SQLImage(e.def, refreshRow(nil, id, to))
	if err != nil {
		return change.Event{}, err
	}
	pk, err := rowimage.KeyFromImage(e.def, after)
	if err != nil {
		return change.Event{}, err
	}
	return change.Event{Seq: seq, CommitTime: at, BinlogFile: refreshBinlog, EndPos: 1000 + seq*200,
		Schema: refreshSchema, Table: table, Op: change.OpUpdate, PK: pk, SchemaVersion: 1, Before: before, After: after}, nil
}

// commitEvents stores evs of source in the index in one transaction
// (none when evs is empty).
func (e *refreshEnv) commitEvents(ctx context.Context, source string, evs []change.Event) error {
	if len(evs) == 0 {
		return nil
	}
	tx, err := e.store.Begin(ctx, source, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.InsertEvents(ctx, evs); err != nil {
		return err
	}
	return tx.Commit()
}

// nextID returns a fresh snapshot id, one second after the previous one.
func (e *refreshEnv) nextID() string {
	e.runs++
	t, _ := snapshot.ParseSnapshotID(refreshPrevID)
	return t.Add(time.Duration(e.runs) * time.Second).Format("20060102T150405Z")
}

// input is the RefreshTable input of a pair or rewrite of window k of tb
// into snapshot id.
func (e *refreshEnv) input(tb *refreshFixture, k int, action foldplan.Action, id string) calls.RefreshTableInput {
	w := tb.windows[k]
	tp := foldplan.TablePlan{Key: foldplan.TableKey{Schema: refreshSchema, Table: refreshTable}, Action: action,
		Reason: "bench", Changes: int64(k), Kind: snapshot.KindDelta}
	if action == foldplan.ActionPair {
		tp.Next = 1
		tp.Chain = tb.mt.Chain
		tp.Links = tb.links
	}
	return calls.RefreshTableInput{Source: tb.source, SnapshotID: id, Prev: refreshPrevID, PrevSeq: w.prevSeq,
		Cut: binlogpos.Position{File: refreshBinlog, Pos: w.endPos, Seq: w.cut}, Table: tp}
}

// run executes RefreshTable once into a new staging folder, which it removes
// afterwards.
func (e *refreshEnv) run(ctx context.Context, tb *refreshFixture, k int, action foldplan.Action) (refreshRun, error) {
	id := e.nextID()
	r, err := executeRefresh(e.acts, e.input(tb, k, action, id))
	os.RemoveAll(snapshot.Folder(e.sourceDir(tb.source)).Staging(id))
	if err != nil {
		return refreshRun{}, fmt.Errorf("refresh %s window %d %s: %w", tb.source, k, action, err)
	}
	return r, nil
}

var warmTemporal sync.Once

func newActivityEnv() *temporaltest.TestActivityEnvironment {
	var s temporaltest.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	return s.NewTestActivityEnvironment()
}

// executeRefresh stages snapshot in.SnapshotID and runs the RefreshTable
// activity on it in Temporal's test activity environment, timing the
// activity alone.
func executeRefresh(acts *activities.Activities, in calls.RefreshTableInput) (refreshRun, error) {
	if _, err := snapshot.NewBuilder(filepath.Join(acts.BackupDir, in.Source), in.SnapshotID); err != nil {
		return refreshRun{}, err
	}
	warmTemporal.Do(func() {
		// The first activity of a process hashes the executable (Temporal's
		// binary checksum): a cost of starting a worker, not of a refresh.
		noop := func(context.Context) error { return nil }
		env := newActivityEnv()
		env.RegisterActivity(noop)
		env.ExecuteActivity(noop)
	})
	env := newActivityEnv()
	env.RegisterActivity(acts)
	began := time.Now()
	val, err := env.ExecuteActivity(acts.RefreshTable, in)
	elapsed := time.Since(began)
	if err != nil {
		return refreshRun{}, err
	}
	var res calls.ConvertTableResult
	if err := val.Get(&res); err != nil {
		return refreshRun{}, err
	}
	r := refreshRun{elapsed: elapsed, space: res.Space}
	switch in.Table.Action {
	case foldplan.ActionPair:
		if len(res.Chain) < 2 {
			return refreshRun{}, fmt.Errorf("pair wrote a chain of %d files", len(res.Chain))
		}
		for _, c := range res.Chain[len(res.Chain)-2:] {
			r.bytes += c.Size
		}
	case foldplan.ActionRewrite:
		r.bytes = res.Size
		for _, c := range res.Chain {
			r.bytes += c.Size
		}
	}
	return r, nil
}
