package workflows

import (
	"errors"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/payload"
)

// RestoreTableResult is one restored table.
type RestoreTableResult struct {
	Table       string
	Target      string
	Rows        int64
	Written     int64
	Chunks      int
	Fingerprint string
	// Old is the name the replaced table keeps (--replace).
	Old string `json:",omitempty"`
	// ChunkMillis are the chunk transactions' durations (the first
	// maxChunkSamples).
	ChunkMillis []int32 `json:",omitempty"`
}

// maxChunkSamples bounds RestoreTableResult.ChunkMillis.
const maxChunkSamples = 10000

// RestoreResult is a finished restore.
type RestoreResult struct {
	RestoreID  string
	TargetAddr string
	Cut        moment.Cut
	Base       string
	Tables     []RestoreTableResult
	Rows       int64
	Written    int64
	// Dropped are a drill's scratch schemas, dropped at its end.
	Dropped []string `json:",omitempty"`
}

// restoreOptions are the options of a restore's heartbeating activities.
// A cancelled run waits until its activities have stopped (they stop after
// the current chunk), so what it leaves loaded is final when it ends.
var restoreOptions = waitForCancel(longOptions(12*time.Hour, 5*calls.HeartbeatEvery, 10*time.Second))

func waitForCancel(o workflow.ActivityOptions) workflow.ActivityOptions {
	o.WaitForCancellation = true
	return o
}

// Restore loads tables rebuilt at a moment into a live server
// (docs/restore.md): PlanRestore decides the cut, the tables and their
// targets and refuses what cannot be done before anything is written;
// every table (Parallel at once) is loaded by LoadTable calls, each a
// slice of chunks that returns where the table stands (its checkpoint is
// in the target, so any worker goes on from it), then verified (and, under
// --replace, swapped in) by VerifyRestore; EndRestore removes the staged
// tables (and a drill's schemas). A cancelled run leaves what it loaded,
// with its checkpoints: a rerun goes on from them.
func Restore(ctx workflow.Context, in payload.RestoreInput) (RestoreResult, error) {
	progress := payload.RestoreProgress{Phase: "planning", ETASeconds: -1}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.RestoreProgress, error) { return progress, nil }); err != nil {
		return RestoreResult{}, err
	}
	if in.Parallel <= 0 {
		in.Parallel = 2
	}
	in.Parallel = min(in.Parallel, payload.MaxRestoreParallel)
	long := workflow.WithActivityOptions(ctx, restoreOptions)
	var plan calls.PlanRestoreResult
	if err := workflow.ExecuteActivity(long, calls.PlanRestore, calls.PlanRestoreInput{Spec: in.RestoreSpec}).Get(ctx, &plan); err != nil {
		return RestoreResult{}, err
	}
	res := RestoreResult{RestoreID: plan.RestoreID, TargetAddr: plan.TargetAddr, Cut: plan.Plan.Cut, Base: plan.Plan.Base,
		Tables: make([]RestoreTableResult, len(plan.Jobs))}
	progress = payload.RestoreProgress{Phase: "loading", RestoreID: plan.RestoreID, Cut: plan.Plan.Cut.String(), ETASeconds: -1}
	for _, j := range plan.Jobs {
		progress.Tables = append(progress.Tables, payload.RestoreTableProgress{Table: j.Table.Key().String(), Target: j.Target(), State: payload.TableWaiting})
	}
	r := &restoreRun{in: in, long: long, progress: &progress, res: &res, started: workflow.Now(ctx)}
	err := r.tables(ctx, plan.Jobs)
	if err != nil {
		progress.Phase = "failed"
		removeRestoreStaging(ctx, in.RestoreSpec, plan.RestoreID)
		return res, err
	}
	progress.Phase = "finishing"
	end := calls.EndRestoreInput{Spec: in.RestoreSpec, RestoreID: plan.RestoreID}
	if in.Drill {
		for _, j := range plan.Jobs {
			if !slices.Contains(end.DropSchemas, j.Schema) {
				end.DropSchemas = append(end.DropSchemas, j.Schema)
			}
		}
	}
	sctx := workflow.WithActivityOptions(ctx, shortOptions(10*time.Minute))
	if err := workflow.ExecuteActivity(sctx, calls.EndRestore, end).Get(ctx, nil); err != nil {
		if in.Drill {
			return res, err
		}
		workflow.GetLogger(ctx).Warn("restore's staged tables not removed", "restore", plan.RestoreID, "error", err)
	}
	res.Dropped = end.DropSchemas
	progress.Phase = "done"
	return res, nil
}

// restoreRun is one run's state: its progress and result.
type restoreRun struct {
	in       payload.RestoreInput
	long     workflow.Context
	progress *payload.RestoreProgress
	res      *RestoreResult
	started  time.Time
	parts    int // LoadTableInput.Parts
}

// tables restores every job, Parallel at once, and returns the first
// error (the other tables stop after their current step).
func (r *restoreRun) tables(ctx workflow.Context, jobs []calls.RestoreTableJob) error {
	next := 0
	var firstErr error
	wg := workflow.NewWaitGroup(ctx)
	// Fewer tables than Parallel: each loads as several key ranges at
	// once (LoadTableInput.Parts), so the connections still number Parallel.
	r.parts = max(1, r.in.Parallel/max(1, min(r.in.Parallel, len(jobs))))
	for range min(r.in.Parallel, len(jobs)) {
		wg.Add(1)
		workflow.Go(ctx, func(gctx workflow.Context) {
			defer wg.Done()
			for firstErr == nil && next < len(jobs) {
				i := next
				next++
				if err := r.table(gctx, i, jobs[i]); err != nil && firstErr == nil {
					firstErr = err
				}
			}
		})
	}
	wg.Wait(ctx)
	return firstErr
}

// table loads one table slice by slice, then verifies it.
func (r *restoreRun) table(ctx workflow.Context, i int, job calls.RestoreTableJob) error {
	tp := &r.progress.Tables[i]
	out := &r.res.Tables[i]
	out.Table, out.Target = tp.Table, tp.Target
	tp.State = payload.TableLoading
	chunk := 0
	var floor int64 // the most rows the target was known to hold
	var loaded calls.LoadTableResult
	for !loaded.Done {
		var s calls.LoadTableResult
		in := calls.LoadTableInput{Spec: r.in.RestoreSpec, Job: job, ChunkRows: chunk, Slice: r.in.Slice, Parts: r.parts}
		if err := workflow.ExecuteActivity(r.long, calls.LoadTable, in).Get(ctx, &s); err != nil {
			if n, ok := loadLost(ctx, err, floor); ok {
				workflow.GetLogger(ctx).Warn("every attempt of a LoadTable lost its worker after loading rows: called again",
					"table", tp.Target, "rows_before", floor, "rows_loaded", n)
				floor = n
				continue
			}
			return err // its message names the table; its type stays the first the CLI and tests see
		}
		floor = max(floor, s.Rows)
		chunk, loaded = s.ChunkRows, s
		out.Written += s.Written
		out.Chunks += s.Chunks
		if left := maxChunkSamples - len(out.ChunkMillis); left > 0 {
			out.ChunkMillis = append(out.ChunkMillis, s.ChunkMillis[:min(left, len(s.ChunkMillis))]...)
		}
		tp.Rows, tp.Total, tp.ChunkRows, tp.Paused = s.Rows, s.Total, s.ChunkRows, s.Paused
		r.tally(ctx, s.Written)
	}
	tp.State = payload.TableVerifying
	var v calls.VerifyRestoreResult
	if err := workflow.ExecuteActivity(r.long, calls.VerifyRestore, calls.VerifyRestoreInput{Spec: r.in.RestoreSpec, Job: job, Def: loaded.Def}).Get(ctx, &v); err != nil {
		return err
	}
	tp.State = payload.TableVerified
	out.Rows, out.Fingerprint, out.Old = v.Rows, v.Fingerprint, v.Old
	r.progress.TablesDone++
	return nil
}

// loadLostChange is the version id (workflow.GetVersion) of calling a
// LoadTable again after its attempts were all lost with rows loaded.
const loadLostChange = "restore-load-lost-with-progress"

// loadLost reports whether err is a LoadTable whose every attempt timed
// out (its worker died or hung: MaxAttempts lost workers) while the target
// came to hold more rows than floor (its last heartbeat's Loaded), and
// returns those rows. Such a call is made again: a restore that moves is
// never given up for crashes, however many, while one that loads nothing
// in MaxAttempts attempts fails, and so does any other error.
func loadLost(ctx workflow.Context, err error, floor int64) (int64, bool) {
	var te *temporal.TimeoutError
	if !errors.As(err, &te) || !te.HasLastHeartbeatDetails() {
		return 0, false
	}
	var p calls.LoadProgress
	if te.LastHeartbeatDetails(&p) != nil || p.Loaded <= floor {
		return 0, false
	}
	if workflow.GetVersion(ctx, loadLostChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return 0, false
	}
	return p.Loaded, true
}

// tally adds a slice's rows to the run's totals, rate and ETA.
func (r *restoreRun) tally(ctx workflow.Context, written int64) {
	p := r.progress
	p.Written += written
	r.res.Written = p.Written
	p.Rows, p.Total, p.Paused = 0, 0, ""
	for _, t := range p.Tables {
		p.Rows += t.Rows
		p.Total += t.Total
		if p.Paused == "" && t.Paused != "" {
			p.Paused = t.Target + ": " + t.Paused
		}
	}
	r.res.Rows = p.Rows
	elapsed := workflow.Now(ctx).Sub(r.started).Seconds()
	if elapsed > 0 && p.Written > 0 {
		p.RowsPerSecond = float64(p.Written) / elapsed
		p.ETASeconds = int64(float64(p.Total-p.Rows) / p.RowsPerSecond)
	}
}

// restoreStagingChange is the version id (workflow.GetVersion) of the
// removal of a failed or cancelled restore's staged tables.
const restoreStagingChange = "restore-staging-on-failure"

// removeRestoreStaging removes what a failed or cancelled restore staged
// (EndRestore without schemas to drop), in a disconnected context so a
// cancelled run cleans up too: a run that stops leaves its checkpoints in
// the target, which a rerun goes on from, and no staged table behind (a
// rerun stages again). A cleanup that fails is only logged.
func removeRestoreStaging(ctx workflow.Context, spec payload.RestoreSpec, restoreID string) {
	if workflow.GetVersion(ctx, restoreStagingChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	dctx, cancel := cleanupContext(ctx)
	defer cancel()
	if err := workflow.ExecuteActivity(dctx, calls.EndRestore, calls.EndRestoreInput{Spec: spec, RestoreID: restoreID}).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("staged tables of a stopped restore not removed", "restore", restoreID, "error", err)
	}
}
