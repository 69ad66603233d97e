// Package tail prepares the live tail of a query session: the newest
// snapshot plus the changes captured after it, cut at one transaction for
// every table (docs/tail.md). It decides with the time-travel seam
// (moment.Past.Plan at "latest": the cut, the base snapshot, the schema
// changes that refuse); when a statement names a changed table, the
// session stages its events at that cut as a fold window
// (fold.WriteWindowFile) and the views (internal/views) apply it after the
// snapshot with the fold's rule. Tables always written in full are folded
// into a table file by moment.Rebuilder.
package tail

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/internal/when"
)

// DefaultMaxEvents is the largest tail Reader folds by default.
const DefaultMaxEvents = 2_000_000

// Reader prepares tails of one source.
type Reader struct {
	Past moment.Past
	// MaxEvents bounds the tail: more events after the snapshot than this
	// and the answer is the snapshot's, with the reason (the next refresh
	// folds them). 0: DefaultMaxEvents.
	MaxEvents int64
	// MemoryLimit bounds the fold engine that folds tables always written
	// in full (fold.DefaultMemoryLimit when empty).
	MemoryLimit string
	Log         *slog.Logger
	// At is the moment the views answer at (when.Parse's forms); the
	// zero At is latest, the live tail. At any other moment a refusal
	// (moment.RefusedError) or a tail over MaxEvents is an error, never
	// the current snapshot's answer: the time-travel SQL port's
	// SET @@dbtrail_at.
	At when.At
	// Cache, when set, keeps the tables' staged windows for the next
	// tails of the process: a tail stages only the events after the
	// cached ones (docs/tail.md, "The tail cache").
	Cache *Cache
}

// at is r's moment: At, or latest.
func (r *Reader) at() when.At {
	if r.At.Kind == "" {
		return when.At{Kind: when.KindLatest}
	}
	return r.At
}

// State is one prepared tail: what a session's views answer. Its views'
// Stage is not safe for concurrent use.
type State struct {
	// Snapshot is the snapshot the views read and Position its position.
	Snapshot string
	Position binlogpos.Position
	// Live reports that the answer is cut at Cut (the snapshot plus the
	// changes after it up to Cut); otherwise it is the snapshot's, and
	// Reason says why the changes after it are left out.
	Live   bool
	Cut    moment.Cut
	Reason string
	// Tables and Events count the changed tables and their events;
	// Staged the events staged so far (a table's changes are staged when
	// a statement names it: views.Tail.Pending).
	Tables int
	Events int64
	Staged int64
	// Cached of the Staged events were read from the tail cache
	// (Reader.Cache), not the index.
	Cached int64
	// Took is how long preparing took; Staging how long staging took so
	// far.
	Took    time.Duration
	Staging time.Duration
	Views   *views.Tail
}

// Seq is the seq the answer is cut at: the cut's, or the snapshot's.
func (s *State) Seq() uint64 {
	if s.Live {
		return s.Cut.Seq
	}
	return s.Position.Seq
}

// String names the transaction the answer is cut at.
func (s *State) String() string {
	switch {
	case s.Live && s.Events == 0:
		return fmt.Sprintf("cut: snapshot %s at binlog %s, GTID %s, seq %d: no change captured after it up to seq %d",
			s.Snapshot, s.Position, gtid(s.Position.GTID), s.Position.Seq, s.Cut.Seq)
	case s.Live:
		return fmt.Sprintf("cut: %s (snapshot %s + %d events of %d tables after it)", s.Cut, s.Snapshot, s.Events, s.Tables)
	}
	return fmt.Sprintf("cut: snapshot %s at binlog %s, GTID %s, seq %d; the changes after it are left out: %s",
		s.Snapshot, s.Position, gtid(s.Position.GTID), s.Position.Seq, s.Reason)
}

func gtid(g string) string {
	if g == "" {
		return "(none)"
	}
	return g
}

// ViewsTail is r as a views session's tail hook
// (views.SessionOptions.Tail): it prepares the tail in the session's
// folder (Prepare) and hands the session its views; keep, when not nil, is
// given the prepared state (its cut, for the answer).
func (r *Reader) ViewsTail(keep func(*State)) func(context.Context, string) (*views.Tail, error) {
	return func(ctx context.Context, dir string) (*views.Tail, error) {
		st, err := r.Prepare(ctx, dir)
		if err != nil {
			return nil, err
		}
		if keep != nil {
			keep(st)
		}
		return st.Views, nil
	}
}

// Prepare cuts the source at capture's checkpoint (the newest captured
// transaction: one cut for every table) and returns the tail: its views'
// Pending tables are staged into dir by its Stage, at that cut, and read
// from there until the caller removes dir. When the cut cannot
// be answered exactly from the newest snapshot and the index (a moment
// refusal: a schema change after the snapshot the fold cannot follow, a
// capture gap, no checkpoint), or the tail holds more than MaxEvents
// events, the answer falls back to the current snapshot and says why. Any
// other failure (the index unreachable, a file unreadable) is an error.
func (r *Reader) Prepare(ctx context.Context, dir string) (*State, error) {
	start := time.Now()
	st, err := r.prepare(ctx, dir)
	if err != nil {
		return nil, err
	}
	st.Took = time.Since(start)
	st.Views.Note = st.String()
	if r.Log != nil {
		r.Log.Debug("tail prepared", "snapshot", st.Snapshot, "live", st.Live, "seq", st.Seq(),
			"tables", st.Tables, "events", st.Events, "took", st.Took, "reason", st.Reason)
	}
	return st, nil
}

func (r *Reader) prepare(ctx context.Context, dir string) (*State, error) {
	plan, cat, err := r.Past.Plan(ctx, r.at(), moment.Selection{})
	if rf, ok := moment.IsRefused(err); ok {
		return r.fallback(ctx, fmt.Sprintf("%s: %s", rf.Code, rf.Reason))
	}
	if err != nil {
		return nil, fmt.Errorf("tail of %s: %w", r.Past.Source, err)
	}
	st := &State{Snapshot: plan.Base, Position: plan.BasePosition, Live: true, Cut: plan.Cut,
		Views: &views.Tail{Snapshot: plan.Base, Windows: map[string]*views.Window{}, Files: map[string]string{}}}
	for _, tp := range plan.Tables {
		if tp.Def == nil {
			continue
		}
		if st.Views.Defined == nil {
			st.Views.Defined, st.Views.CreateFrom = map[string]*schema.Table{}, map[string]string{}
		}
		st.Views.Defined[tp.Key().String()] = tp.Def
		if tp.CreateFrom != "" {
			st.Views.CreateFrom[tp.Key().String()] = tp.CreateFrom
		}
	}
	if plan.Cut.Seq <= plan.BasePosition.Seq {
		return st, nil
	}
	if r.Past.Archive == nil {
		dropped, err := r.Past.DroppedHours(ctx, plan.BasePosition.Seq, plan.Cut.Seq)
		if err != nil {
			return nil, fmt.Errorf("tail of %s: %w", r.Past.Source, err)
		}
		if len(dropped) > 0 {
			return r.fallback(ctx, droppedReason(plan, dropped))
		}
	}
	counts, err := r.Past.ChangeCounts(ctx, plan.BasePosition.Seq, plan.Cut.Seq)
	if err != nil {
		return nil, fmt.Errorf("tail of %s: count changes: %w", r.Past.Source, err)
	}
	var changed []moment.TablePlan
	for _, tp := range plan.Tables {
		if n := counts[tp.Key()]; n > 0 || tp.Lineage != nil {
			changed = append(changed, tp)
			st.Events += n
		}
	}
	st.Tables = len(changed)
	if max := r.maxEvents(); st.Events > max {
		return r.fallback(ctx, fmt.Sprintf("the tail holds %d events after snapshot %s, more than %d (--tail-max-events): the next refresh folds them",
			st.Events, plan.Base, max))
	}
	snap, err := cat.Open(ctx, plan.Base)
	if err != nil {
		return nil, fmt.Errorf("tail of %s: %w", r.Past.Source, err)
	}
	if gone := dropped(snap.Manifest, plan); len(gone) > 0 {
		st.Views.Gone = map[string]bool{}
		for _, name := range gone {
			st.Views.Gone[name] = true
		}
	}
	f := &folder{r: r, dir: dir, cat: cat, snap: snap, cut: plan.Cut, plans: map[string]moment.TablePlan{}}
	st.Views.Pending = map[string]bool{}
	for _, tp := range changed {
		f.plans[tp.Key().String()] = tp
		st.Views.Pending[tp.Key().String()] = true
	}
	st.Views.Stage = func(ctx context.Context, names []string) error { return f.stage(ctx, names, st) }
	var shaped []string
	for _, tp := range changed {
		if tp.Lineage != nil {
			if st.Views.Shapes == nil {
				st.Views.Shapes = map[string]*schema.Table{}
			}
			st.Views.Shapes[tp.Key().String()] = tp.Lineage.Def
			shaped = append(shaped, tp.Key().String())
		}
	}
	// A table whose columns changed, or that was created or renamed after
	// the snapshot, is staged now: its view needs the shape at the cut,
	// which no stand-in over the snapshot's file has.
	if len(shaped) > 0 {
		if err := f.stage(ctx, shaped, st); err != nil {
			return nil, fmt.Errorf("tail of %s: %w", r.Past.Source, err)
		}
	}
	return st, nil
}

// droppedReason is the reason a tail without an archive location leaves
// out a window that reaches into hours the index dropped.
func droppedReason(plan moment.Plan, hours []moment.ArchiveHour) string {
	var names []string
	for _, h := range hours {
		names = append(names, fmt.Sprintf("%s (seq %d-%d)", change.HourTime(h.Hour).Format("2006-01-02 15:00 UTC"), h.FirstSeq, h.LastSeq))
	}
	return fmt.Sprintf("%s: the changes after snapshot %s (seq %d to %d) reach into archived hours the index dropped: %s; give --archive-url (or DBTRAIL_ARCHIVE_URL) to read them",
		moment.CodeArchive, plan.Base, plan.BasePosition.Seq, plan.Cut.Seq, strings.Join(names, ", "))
}

// dropped lists the tables of snapshot m that plan does not hold: gone at
// the cut (the plan holds every table that exists then).
func dropped(m snapshot.Manifest, plan moment.Plan) []string {
	in := map[moment.TableKey]bool{}
	for _, tp := range plan.Tables {
		in[tp.Key()] = true
	}
	var out []string
	for _, mt := range m.Tables {
		if k := (moment.TableKey{Schema: mt.Schema, Table: mt.Table}); !in[k] {
			out = append(out, k.String())
		}
	}
	return out
}

// stageParallel is how many tables one statement stages at once.
const stageParallel = 2

// stage stages the changes of names (pending tables of st) at st's cut,
// stageParallel tables at a time.
func (f *folder) stage(ctx context.Context, names []string, st *State) error {
	defer f.closeEngine()
	start := time.Now()
	defer func() { st.Staging += time.Since(start) }()
	for _, name := range names {
		if _, ok := f.plans[name]; !ok || !st.Views.Pending[name] {
			return fmt.Errorf("tail of %s: %s is not a pending table", f.r.Past.Source, name)
		}
	}
	out := make([]staged, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(stageParallel)
	for i, name := range names {
		f.files++
		n := f.files
		g.Go(func() error {
			var err error
			if out[i], err = f.add(gctx, f.plans[name], n); err != nil {
				return fmt.Errorf("tail of %s: %s: %w", f.r.Past.Source, name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, name := range names {
		if out[i].window != nil {
			st.Views.Windows[name] = out[i].window
		} else {
			st.Views.Files[name] = out[i].file
		}
		delete(st.Views.Pending, name)
		st.Staged += out[i].events
		st.Cached += out[i].cached
		if f.r.Log != nil {
			f.r.Log.Debug("tail staged", "table", name, "events", out[i].events, "cached", out[i].cached, "seq", st.Cut.Seq)
		}
	}
	return nil
}

// staged is one table's staged changes: a window, or a table file; cached
// of its events were read from the tail cache.
type staged struct {
	window         *views.Window
	file           string
	events, cached int64
}

// fallback is the current snapshot alone, with the reason; at a moment
// other than latest it is the error naming the reason.
func (r *Reader) fallback(ctx context.Context, reason string) (*State, error) {
	if at := r.at(); at.Kind != when.KindLatest {
		return nil, fmt.Errorf("moment %s of %s: %s", at, r.Past.Source, reason)
	}
	id, err := snapshot.ResolveCurrent(r.Past.SourceDir)
	if err != nil {
		return nil, fmt.Errorf("tail of %s: %w (and the tail is off: %s)", r.Past.Source, err, reason)
	}
	snap, err := moment.LocalCatalog{SourceDir: r.Past.SourceDir}.Open(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("tail of %s: %w", r.Past.Source, err)
	}
	return &State{Snapshot: id, Position: snap.Manifest.Position, Reason: reason, Views: &views.Tail{Snapshot: id}}, nil
}

func (r *Reader) maxEvents() int64 {
	if r.MaxEvents > 0 {
		return r.MaxEvents
	}
	return DefaultMaxEvents
}

// folder stages the changed tables of one tail.
type folder struct {
	r     *Reader
	dir   string
	cat   moment.Catalog
	snap  *snapshot.Snapshot
	cut   moment.Cut
	plans map[string]moment.TablePlan // the changed tables, by schema.table
	files int                         // files staged so far, naming the next

	engineMu sync.Mutex
	engine   *fold.Engine // opened for the first table written in full
}

// add stages tp's changes as file n of the folder and returns them: a
// window, or for a table always written in full, a table file of the
// table at the cut.
func (f *folder) add(ctx context.Context, tp moment.TablePlan, n int) (staged, error) {
	if tp.Lineage != nil {
		// A schema change reshaped, emptied, renamed or created it since
		// the snapshot: the table at the cut, whole, through its lineage.
		return f.fullTable(ctx, tp, filepath.Join(f.dir, fmt.Sprintf("%d.parquet", n)))
	}
	mt, ok := f.snap.Manifest.Table(tp.Schema, tp.Table)
	if !ok {
		return staged{}, fmt.Errorf("snapshot %s has no table file", f.snap.Manifest.SnapshotID)
	}
	foot, err := snapshot.ReadFooter(f.snap.Path(mt.File))
	if err != nil {
		return staged{}, fmt.Errorf("snapshot %s: %w", f.snap.Manifest.SnapshotID, err)
	}
	if snapshot.FullOnly(foot.Table) {
		// A table always written in full: the table at the cut, whole.
		return f.fullTable(ctx, tp, filepath.Join(f.dir, fmt.Sprintf("%d.parquet", n)))
	}
	// Through the cache; without one (Reader.Cache nil) the window is
	// staged whole as one file of the folder.
	key := cacheKey{source: f.r.Past.Source, base: f.snap.Manifest.SnapshotID, table: tp.Key().String(),
		file: fmt.Sprintf("%s %d %v", mt.File, mt.Rows, mt.Fingerprint), after: tp.After}
	cw, err := f.r.Cache.window(key, tp.Upto, f.dir, fmt.Sprint(n), tableStager{ctx: ctx, r: f.r, tp: tp, t: foot.Table})
	if err != nil {
		return staged{}, err
	}
	return staged{events: cw.events, cached: cw.events - cw.staged, window: &views.Window{Paths: cw.paths, Spans: cw.spans,
		KeyCol: fold.WindowKeyCol, OpCol: fold.WindowOpCol, Events: cw.events,
		KeyMatch: func(left, right string) string { return fold.KeyMatch(foot.Table, left, right) }}}, nil
}

// tableStager writes the window files of one table of a tail: its events
// from the index (and the archive), with the base table file's definition.
type tableStager struct {
	ctx context.Context
	r   *Reader
	tp  moment.TablePlan
	t   *schema.Table
}

func (s tableStager) stage(from, to uint64, path string) (int64, error) {
	w, err := fold.WriteWindowFile(s.t, path, func(fn func(change.Event) error) error {
		return s.r.Past.Events().TableEvents(s.ctx, s.r.Past.Source, s.tp.Schema, s.tp.Table, from, to, fn)
	})
	if err != nil {
		return 0, err
	}
	return w.Events, nil
}

func (s tableStager) join(path string, paths []string) error {
	return fold.JoinWindowFiles(s.t, path, paths)
}

// fullTable folds tp at the cut into a table file at path (the rebuild
// every reader of the past uses), one table at a time.
func (f *folder) fullTable(ctx context.Context, tp moment.TablePlan, path string) (staged, error) {
	f.engineMu.Lock()
	defer f.engineMu.Unlock()
	if f.engine == nil {
		e, err := fold.Open(ctx, fold.Options{TempDir: filepath.Join(f.dir, "fold"), MemoryLimit: f.r.MemoryLimit, Threads: 1})
		if err != nil {
			return staged{}, err
		}
		f.engine = e
	}
	rb := f.r.Past.Rebuilder(f.engine, f.cat)
	t, err := rb.Open(ctx, tp, nil)
	if err != nil {
		return staged{}, err
	}
	defer t.Close()
	out, err := filemode.Create(path)
	if err != nil {
		return staged{}, err
	}
	meta := t.Footer
	meta.Position = f.cut.Position()
	_, err = t.Write(ctx, meta, out, nil)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return staged{}, err
	}
	return staged{file: path, events: t.Events}, nil
}

// closeEngine closes the fold engine a table written in full opened.
func (f *folder) closeEngine() {
	if f.engine != nil {
		f.engine.Close()
		f.engine = nil
	}
}
