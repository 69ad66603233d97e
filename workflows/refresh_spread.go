package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// One refresh over several workers. The refresh's session runs on the
// stager: the worker that published the previous snapshot when it is live
// (it holds that snapshot and its key maps warm), another one otherwise.
// The stager plans, stages, publishes, uploads and prunes, as before; its
// tables are spread: every live worker that polls its own queue
// (activities.WorkerQueue) folds tables there, at most Parallel at once,
// reading the previous snapshot's files from the remote store and putting
// what it writes there; the stager adopts each one as it completes
// (AdoptTable). A table goes to the stager whenever it has a free slot
// (the stager is preferred; links and tables with a compacted range only
// run there), to another worker when that one has a free slot (from the
// plan's end: tables keep their worker from refresh to refresh). A table
// that fails on another worker, or that the worker does not take within
// sharedTableWait (it died), goes back to the stager, and that worker gets
// no more tables of this refresh: a worker lost mid-refresh costs only its
// tables. The stager lost is the session lost (onOneHost).

// spreadTablesChange is the change id (workflow.GetVersion) of the tables
// spread over workers: histories recorded before it run every table in
// the session, as they ran.
const spreadTablesChange = "spread-tables"

// sharedTableWait is how long a table placed on another worker's queue
// waits for that worker to take it (a live worker takes it at once: it
// never has more than Parallel of the refresh's tables) before it goes
// back to the stager.
const sharedTableWait = 10 * time.Second

// sharedTableOptions are the options of a table folded on the worker that
// polls queue: one attempt (its retries are the stager's), noticed lost
// within the heartbeat timeout. A cancelled attempt is waited for (it
// stops at its next heartbeat, or is lost within the heartbeat timeout):
// a failed refresh deletes its files from the store only once none of its
// shared attempts still puts any.
func sharedTableOptions(queue string) workflow.ActivityOptions {
	o := refreshActivityOptions
	o.TaskQueue = queue
	o.ScheduleToStartTimeout = sharedTableWait
	o.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 1}
	o.WaitForCancellation = true
	return o
}

// refreshTables runs the plan's tables: spread over the live workers
// (spreadAll) when RefreshWorkers, on the stager (ctx is the session's),
// names others, otherwise all on the stager (refreshAll). root is the
// workflow's context outside the session. shared says whether a table was
// started on another worker (which may have put files on the store under
// id: a failed refresh deletes them, discardShared).
func refreshTables(ctx, root workflow.Context, in payload.RefreshInput, id string, plan calls.PlanRefreshResult,
	progress *payload.RefreshProgress) (results []calls.ConvertTableResult, shared bool, err error) {
	long := workflow.WithActivityOptions(ctx, refreshActivityOptions)
	if workflow.GetVersion(ctx, spreadTablesChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion ||
		!slices.ContainsFunc(plan.Plan.Tables, shareable) {
		results, err = refreshAll(long, in, id, plan, progress)
		return results, false, err
	}
	log := workflow.GetLogger(ctx)
	var w calls.RefreshWorkersResult
	short := workflow.WithActivityOptions(ctx, shortOptions(time.Minute))
	if err := workflow.ExecuteActivity(short, calls.RefreshWorkers, calls.RefreshWorkersInput{Source: in.Source, Prev: plan.Prev,
		TaskQueue: workflow.GetInfo(ctx).TaskQueueName}).Get(ctx, &w); err != nil {
		log.Warn("live workers unknown; every table runs on the stager", "error", err)
		results, err = refreshAll(long, in, id, plan, progress)
		return results, false, err
	}
	if len(w.Others) == 0 {
		log.Info("every table runs on the stager", "reason", w.Reason)
		results, err = refreshAll(long, in, id, plan, progress)
		return results, false, err
	}
	return spreadAll(ctx, root, in, id, plan, w.Others, progress)
}

// shareable says whether a table may run on a worker other than the
// stager: a pair or a rewrite without a compacted range (.compact/ is the
// stager's alone; a link is only links).
func shareable(t foldplan.TablePlan) bool {
	return (t.Action == foldplan.ActionPair || t.Action == foldplan.ActionRewrite) && t.UseCompacted == nil &&
		t.Lineage == nil && t.Base == "" && !t.DefinitionMoved // folded on the stager: a lineage reads the index and local snapshots
}

// spreadAll runs the tables on the stager (worker 0, ctx's session) and on
// the workers of the queues others (1..), as placement decides; a shared
// table's files are adopted by the stager as it completes. Results keep
// the plan's order; shared says whether a table was started on another
// worker. The first error of a table on the stager, or of an adoption,
// stops new starts and is returned once the running ones end.
func spreadAll(ctx, root workflow.Context, in payload.RefreshInput, id string, plan calls.PlanRefreshResult, others []string,
	progress *payload.RefreshProgress) (results []calls.ConvertTableResult, shared bool, err error) {
	tables := plan.Plan.Tables
	results = make([]calls.ConvertTableResult, len(tables))
	p := newPlacement(tables, 1+len(others), in.Parallel)
	long := workflow.WithActivityOptions(ctx, refreshActivityOptions)
	rctx, cancel := workflow.WithCancel(root)
	defer cancel()
	log := workflow.GetLogger(ctx)
	sel := workflow.NewSelector(ctx)
	running := 0
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	input := func(t int, shared bool) calls.RefreshTableInput {
		ti := refreshTableInput(in, id, plan, tables[t])
		ti.Shared = shared
		return ti
	}
	add := func(f workflow.Future, done func(workflow.Future)) {
		running++
		sel.AddFuture(f, func(f workflow.Future) { running--; done(f) })
	}
	adopt := func(t int, r calls.ConvertTableResult) {
		add(workflow.ExecuteActivity(long, calls.AdoptTable, calls.AdoptTableInput{Source: in.Source, SnapshotID: id, Prev: plan.Prev,
			Table: tables[t], Result: r}), func(f workflow.Future) {
			if err := f.Get(ctx, nil); err != nil {
				fail(err)
				return
			}
			results[t] = r
			progress.TablesDone++
		})
	}
	start := func(w, t int) {
		if w == 0 {
			add(workflow.ExecuteActivity(long, calls.RefreshTable, input(t, false)), func(f workflow.Future) {
				p.done(w)
				if err := f.Get(ctx, &results[t]); err != nil {
					fail(err)
					return
				}
				progress.TablesDone++
			})
			return
		}
		shared = true
		actx := workflow.WithActivityOptions(rctx, sharedTableOptions(others[w-1]))
		add(workflow.ExecuteActivity(actx, calls.RefreshTable, input(t, true)), func(f workflow.Future) {
			var r calls.ConvertTableResult
			if err := f.Get(ctx, &r); err != nil {
				p.lose(w, t)
				if firstErr == nil {
					log.Warn("table back to the stager; its worker gets no more", "table", tables[t].Key.String(),
						"queue", others[w-1], "error", err)
				}
				return
			}
			p.done(w)
			adopt(t, r)
		})
	}
	for {
		for firstErr == nil {
			w, t, ok := p.next()
			if !ok {
				break
			}
			start(w, t)
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
	}
	return results, shared, firstErr
}

// discardSharedChange is the change id (workflow.GetVersion) of the
// deletion of a failed spread refresh's files from the store: histories
// recorded before it end without it.
const discardSharedChange = "discard-shared-on-failure"

// discardShared deletes from the store what the shared tables of a failed
// refresh put under snapshot id, unless its manifest is there
// (activities.DiscardUnpublished). It runs on any worker of the
// workflow's queue (root is the workflow's context outside the session:
// the stager may be the one lost), disconnected, so a cancelled run
// cleans up too. A cleanup that fails is logged: what it left stays on the
// store, outside every manifest, until deleted by hand.
func discardShared(root workflow.Context, source, id string) {
	if workflow.GetVersion(root, discardSharedChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	dctx, cancel := cleanupContext(root)
	defer cancel()
	if err := workflow.ExecuteActivity(dctx, calls.DiscardUnpublished,
		calls.DiscardUnpublishedInput{Source: source, SnapshotID: id}).Get(dctx, nil); err != nil {
		workflow.GetLogger(root).Warn("store objects of a failed refresh not deleted", "source", source, "snapshot", id, "error", err)
	}
}

// refreshTableInput is RefreshTable's input for table t of the refresh's
// plan into snapshot id, on the stager (Shared unset).
func refreshTableInput(in payload.RefreshInput, id string, plan calls.PlanRefreshResult, t foldplan.TablePlan) calls.RefreshTableInput {
	return calls.RefreshTableInput{Source: in.Source, SnapshotID: id, Prev: plan.Prev, PrevSeq: plan.PrevSeq, Cut: plan.Cut,
		Table: t, CreateTable: plan.CreateTables[t.Key.String()]}
}

// placement decides which worker runs which table of a spread refresh:
// worker 0 is the stager, 1.. the others. Each runs at most par tables at
// once; a lost worker (one that failed a table) runs no more.
type placement struct {
	pending []int  // tables not started, in the plan's order
	share   []bool // per table: shareable
	running []int  // per worker
	lost    []bool // per worker
	par     int
}

func newPlacement(tables []foldplan.TablePlan, workers, par int) *placement {
	p := &placement{share: make([]bool, len(tables)), running: make([]int, workers), lost: make([]bool, workers), par: max(par, 1)}
	for i, t := range tables {
		p.pending = append(p.pending, i)
		p.share[i] = shareable(t)
	}
	return p
}

// next returns a table to start now and its worker, counted as running:
// the stager first, with the first pending table, then the other workers
// in order, with the last pending shareable one. The stager works from the
// plan's start and the others from its end, so that a source's tables
// mostly land on the same worker refresh after refresh (the plan's order
// is the tables' order): a worker that folded a table last time has its
// files in its parts folder and its key map warm. ok is false when no
// worker with a free slot has a table it may run.
func (p *placement) next() (w, t int, ok bool) {
	for w := range p.running {
		if p.lost[w] || p.running[w] >= p.par {
			continue
		}
		for k := range p.pending {
			i := k
			if w > 0 {
				i = len(p.pending) - 1 - k
			}
			if t := p.pending[i]; w == 0 || p.share[t] {
				p.pending = slices.Delete(p.pending, i, i+1)
				p.running[w]++
				return w, t, true
			}
		}
	}
	return 0, 0, false
}

// done frees worker w's slot.
func (p *placement) done(w int) { p.running[w]-- }

// lose frees worker w's slot, puts its table t first in line (the
// stager's next) and gives w no more tables.
func (p *placement) lose(w, t int) {
	p.running[w]--
	p.lost[w] = true
	p.pending = slices.Insert(p.pending, 0, t)
}
