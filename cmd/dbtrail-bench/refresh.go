package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	tlog "go.temporal.io/sdk/log"
	temporaltest "go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/room"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/types"
	"github.com/dbtrail/dbtrail/testsuite"
)

// The refreshed table: app.t with a BIGINT key and three other columns.
const (
	refreshSchema = "app"
	refreshTable  = "t"
	refreshDDL    = "CREATE TABLE `t` (`id` bigint NOT NULL, `a` varchar(40) DEFAULT NULL, `b` bigint DEFAULT NULL, `c` double DEFAULT NULL, PRIMARY KEY (`id`));"
	// refreshFoldMemory is Activities.FoldMemory in every run (the default).
	refreshFoldMemory = "256MB"
	// refreshBinlog is the binlog file every synthetic event claims.
	refreshBinlog = "binlog.000001"
	// refreshPrevID is the id of every table's previous snapshot.
	refreshPrevID = "20261129T000000Z"
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
			Engines: activities.NewEnginePool(work, refreshFoldMemory)}}
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

// refreshRun is the measure of one RefreshTable execution.
type refreshRun struct {
	elapsed time.Duration
	bytes   int64 // bytes of the files the run wrote (not linked)
	// room is the run's estimate and bytes written, as its result records
	// them.
	room *room.Step
}

// benchRefresh measures the RefreshTable activity on real files and a real
// index: pairs of 1, 1,000 and 100,000 changed rows against a full rewrite of
// a 1M-row table, a pair of 1,000 changes on tables of 100k, 1M and 5M rows,
// and, in a child process, the peak RSS of a pair of 1M changed rows.
// Tables larger than maxRows are cut to maxRows (quick runs).
func benchRefresh(ctx context.Context, maxRows int) ([]result, error) {
	env, _, stop, err := startRefreshEnv(ctx, "refresh")
	if err != nil {
		return nil, err
	}
	defer stop()

	capRows := func(n int) int { return min(n, maxRows) }
	mainN := capRows(1000000)
	sizes := slices.Compact([]int{capRows(100000), mainN, capRows(5000000)})
	pairWindows := []int{1, 1000, min(100000, mainN)}
	rssWindow := mainN
	tables := map[int]*refreshFixture{}
	for _, n := range sizes {
		began := time.Now()
		tb, err := env.buildTable(n)
		if err != nil {
			return nil, err
		}
		tables[n] = tb
		ks := []int{1000}
		if n == mainN {
			ks = append(slices.Clone(pairWindows), rssWindow)
		}
		for _, k := range ks {
			if _, ok := tb.windows[k]; ok {
				continue
			}
			if err := env.insertWindow(ctx, tb, k); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(os.Stderr, "refresh: %d-row table (%.1f MiB) and its windows %v ready in %s\n",
			n, mib(tb.size), ks, time.Since(began).Round(time.Millisecond))
	}
	big := tables[mainN]

	// The machine is noisy (a pair of 1,000 changes is ~25 ms, much of it
	// fsync, and varies by a few ms): every run is repeated, the rounds
	// interleaved, and the best time of each counts; the short pairs
	// compared across table sizes are repeated more.
	type job struct {
		tb     *refreshFixture
		k      int
		action foldplan.Action
		rounds int
	}
	var jobs []job
	for _, k := range pairWindows {
		rounds := refreshRounds
		if k == 1000 {
			rounds = flatRounds
		}
		jobs = append(jobs, job{big, k, foldplan.ActionPair, rounds})
	}
	jobs = append(jobs, job{big, 1000, foldplan.ActionRewrite, refreshRounds})
	for _, n := range sizes {
		if n != mainN {
			jobs = append(jobs, job{tables[n], 1000, foldplan.ActionPair, flatRounds})
		}
	}
	best := make([]refreshRun, len(jobs))
	first := make([]refreshRun, len(jobs)) // round 0: the pair builds the table file's key map
	for round := range max(refreshRounds, flatRounds) {
		for i, j := range jobs {
			if round >= j.rounds {
				continue
			}
			r, err := env.run(ctx, j.tb, j.k, j.action)
			if err != nil {
				return nil, err
			}
			if round == 0 {
				first[i] = r
			}
			if round == 0 || r.elapsed < best[i].elapsed {
				best[i].elapsed = r.elapsed
			}
			best[i].bytes, best[i].room = r.bytes, r.room
		}
	}
	find := func(tb *refreshFixture, k int, a foldplan.Action) refreshRun {
		for i, j := range jobs {
			if j.tb == tb && j.k == k && j.action == a {
				return best[i]
			}
		}
		panic("refresh bench: no such job")
	}

	rss, child, err := env.rssChild(ctx, big, rssWindow)
	if err != nil {
		return nil, err
	}

	rewrite := find(big, 1000, foldplan.ActionRewrite)
	one := find(big, 1, foldplan.ActionPair)
	timeRatio := one.elapsed.Seconds() / rewrite.elapsed.Seconds()
	byteRatio := float64(one.bytes) / float64(rewrite.bytes)
	out := []result{
		{"refresh: table rows", strconv.Itoa(mainN), "", fmt.Sprintf("BIGINT key, VARCHAR(40), BIGINT, DOUBLE; table file %.1f MiB; FoldMemory %s", mib(big.size), refreshFoldMemory)},
		{"refresh: full rewrite (1,000 changes)", fmtRun(rewrite), "", "RefreshTable rewrite: new table file + empty 000000 pair; best of " + strconv.Itoa(refreshRounds)},
	}
	for _, k := range pairWindows {
		rounds := refreshRounds
		if k == 1000 {
			rounds = flatRounds
		}
		out = append(out, result{fmt.Sprintf("refresh: pair, %s changed %s", thousands(k), plural(k, "row")), fmtRun(find(big, k, foldplan.ActionPair)), "",
			"RefreshTable pair: links + new .posdel/.upserts; best of " + strconv.Itoa(rounds)})
	}
	out = append(out, roomRows(func(yield func(refreshRun) bool) {
		for i := range jobs {
			if !yield(best[i]) {
				return
			}
		}
	})...)
	out = append(out,
		result{"refresh: ratio time 1 row / rewrite", fmt.Sprintf("%.4f", timeRatio), "≤ 0.02", verdict(timeRatio <= 0.02)},
		result{"refresh: ratio bytes 1 row / rewrite", fmt.Sprintf("%.5f", byteRatio), "≤ 0.01", verdict(byteRatio <= 0.01)},
	)
	var times []float64
	var parts, names string
	for i, n := range sizes {
		r := find(tables[n], 1000, foldplan.ActionPair)
		times = append(times, r.elapsed.Seconds())
		if i > 0 {
			parts += " / "
			names += " / "
		}
		parts += fmt.Sprintf("%.3f s", r.elapsed.Seconds())
		names += thousands(n)
	}
	flat := slices.Max(times) / slices.Min(times)
	largest := sizes[len(sizes)-1]
	var cold refreshRun
	for i, j := range jobs {
		if j.tb == tables[largest] && j.k == 1000 && j.action == foldplan.ActionPair {
			cold = first[i]
		}
	}
	out = append(out,
		result{"refresh: pair of 1,000 changes on " + names + " rows", parts, "", "best of " + strconv.Itoa(flatRounds) + ", interleaved with the runs above"},
		result{fmt.Sprintf("refresh: first pair on the %s-row table file", thousands(largest)), fmtRun(cold), "",
			"includes building the table file's key map (once per table file and worker; later pairs look keys up in it)"},
		result{"refresh: ratio max / min of those", fmt.Sprintf("%.2f", flat), "≤ 1.20", verdict(flat <= 1.2)},
		result{fmt.Sprintf("refresh: peak RSS, pair of %s changed rows", thousands(rssWindow)), fmt.Sprintf("%.0f MiB", mib(rss)), "≤ 1 GB",
			fmt.Sprintf("%s; child process ru_maxrss; pair took %s", verdict(rss <= 1<<30), fmtRun(child))},
	)
	up, err := env.benchUpload(ctx, big, 1)
	if err != nil {
		return nil, fmt.Errorf("upload bench: %w", err)
	}
	return append(out, up...), nil
}

// refreshRounds is how many times each refresh run is repeated, and
// flatRounds how many times the pairs of 1,000 changes compared across
// table sizes are.
const (
	refreshRounds = 5
	flatRounds    = 15
)

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func fmtRun(r refreshRun) string {
	size := fmt.Sprintf("%.1f KiB", float64(r.bytes)/1024)
	if r.bytes >= 1<<20 {
		size = fmt.Sprintf("%.1f MiB", mib(r.bytes))
	}
	return fmt.Sprintf("%.3f s, %s written", r.elapsed.Seconds(), size)
}

// thousands formats n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// refreshDefinition parses refreshDDL as a dump's schema file.
func refreshDefinition(dir string) (*schema.Table, string, error) {
	f := filepath.Join(dir, "app.t-schema.sql")
	if err := os.WriteFile(f, []byte(refreshDDL), 0o644); err != nil {
		return nil, "", err
	}
	defer os.Remove(f)
	return dumpconv.Definition(os.DirFS(dir), refreshSchema, refreshTable, "app.t-schema.sql")
}

// refreshRow is row id of the table, in AppendSQL's form; version > 0 gives
// the row as the version-th update left it.
func refreshRow(buf []byte, id, version int) []types.Cell {
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
	return []types.Cell{types.TextCell(buf[:ends[0]]), types.TextCell(buf[ends[0]:ends[1]]),
		types.TextCell(buf[ends[1]:ends[2]]), types.TextCell(buf[ends[2]:ends[3]])}
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
	before, err := types.SQLImage(e.def, refreshRow(nil, id, from))
	if err != nil {
		return change.Event{}, err
	}
	after, err := types.SQLImage(e.def, refreshRow(nil, id, to))
	if err != nil {
		return change.Event{}, err
	}
	pk, err := types.KeyFromImage(e.def, after)
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
func (e *refreshEnv) input(tb *refreshFixture, k int, action foldplan.Action, id string) activities.RefreshTableInput {
	w := tb.windows[k]
	tp := foldplan.TablePlan{Key: foldplan.TableKey{Schema: refreshSchema, Table: refreshTable}, Action: action,
		Reason: "bench", Changes: int64(k), Kind: snapshot.KindDelta}
	if action == foldplan.ActionPair {
		tp.Next = 1
		tp.Chain = tb.mt.Chain
		tp.Links = tb.links
	}
	return activities.RefreshTableInput{Source: tb.source, SnapshotID: id, Prev: refreshPrevID, PrevSeq: w.prevSeq,
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
func executeRefresh(acts *activities.Activities, in activities.RefreshTableInput) (refreshRun, error) {
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
	var res activities.ConvertTableResult
	if err := val.Get(&res); err != nil {
		return refreshRun{}, err
	}
	r := refreshRun{elapsed: elapsed, room: res.Room}
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

// roomRows reports, per step kind (pair, rewrite), the least and greatest
// actual ÷ estimate of the runs whose estimate is above room.Floor (a
// floored estimate says nothing of the rule), against the target 0.4–1.
func roomRows(runs iter.Seq[refreshRun]) []result {
	type span struct {
		lo, hi float64
		n      int
	}
	kinds := map[string]*span{}
	for r := range runs {
		if r.room == nil || r.room.Estimate <= room.Floor {
			continue
		}
		x := room.Ratio(r.room.Written, r.room.Estimate)
		sp := kinds[r.room.Kind]
		if sp == nil {
			sp = &span{lo: x, hi: x}
			kinds[r.room.Kind] = sp
		}
		sp.lo, sp.hi, sp.n = min(sp.lo, x), max(sp.hi, x), sp.n+1
	}
	var out []result
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		sp := kinds[k]
		out = append(out, result{"room: " + k + " written ÷ estimate", fmt.Sprintf("%.2f–%.2f", sp.lo, sp.hi), "0.4–1.0",
			fmt.Sprintf("%s; %d runs above the %s floor", verdict(sp.lo >= 0.4 && sp.hi <= 1), sp.n, disk.Bytes(room.Floor))})
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
