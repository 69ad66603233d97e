package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// RefreshResult is what the refresh did.
type RefreshResult struct {
	SnapshotID string // "" when nothing was published by the refresh itself
	Prev       string
	Position   binlogpos.Position
	Refused    bool
	Reasons    []string
	// FullBackup is the snapshot the full backup that ran in place of a
	// refused refresh published.
	FullBackup string
	Tables     []string // one line per table: its decision and reason
	Compact    []string // tables handed to a Compact workflow
	Pruned     []string
	// Downloaded is the previous snapshot fetched from the remote store
	// because the source folder had no current snapshot.
	Downloaded string `json:",omitempty"`
	// Upload is what went to the remote store (nil when nothing was
	// published, and for runs from before the step).
	Upload *calls.UploadSnapshotResult `json:",omitempty"`
	// SweptParts is what the sweep of leftover parts on the store removed
	// before this refresh allocated its snapshot (sweepParts).
	SweptParts *calls.SweepPartsResult `json:",omitempty"`
	// Redump is the partial full backup that read the tables a schema
	// change in the window left unproven (nil when none ran).
	Redump *RedumpSummary `json:",omitempty"`
}

// RedumpSummary is what a refresh's partial full backup read again.
type RedumpSummary struct {
	SnapshotID string   // the partial snapshot
	Tables     []string // schema.table
	Rows       int64    // rows read from the source
}

// Refresh plans the next snapshot of a source from the previous one and the
// index (foldplan), executes each table's decision as an activity (link,
// pair, rewrite), publishes the snapshot (only while the previous one is
// still current), uploads it to the remote store, prunes old snapshots, and
// hands chains of CompactAt entries to a Compact workflow that runs after
// it. A source folder without its current snapshot first gets the remote
// one (DownloadCurrent). A refused plan publishes nothing: a FullBackup
// child runs in its place when a dump is configured, otherwise the refresh
// ends with the reasons (visible in the Temporal UI). The steps from the
// download to the pruning run on one worker (a session, onOneHost: the
// stager), except the tables, which spread over the live workers
// (refreshTables): when the stager dies the steps start over on another,
// when another worker dies only its tables do. The session asks first for
// the worker that published the previous snapshot (it holds that snapshot
// and its key maps warm), and records this run's worker for the next; the
// Compact child asks for the same worker first.
func Refresh(ctx workflow.Context, in payload.RefreshInput) (RefreshResult, error) {
	progress := payload.RefreshProgress{Phase: "planning"}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.RefreshProgress, error) { return progress, nil }); err != nil {
		return RefreshResult{}, err
	}
	if in.Parallel <= 0 {
		in.Parallel = 2
	}
	var (
		res  RefreshResult
		plan calls.PlanRefreshResult
	)
	host, err := onOneHost(ctx, lastPublisher(ctx, in.Source), func(sctx workflow.Context) error {
		progress = payload.RefreshProgress{Phase: "planning"}
		var err error
		res, plan, err = refreshOnHost(sctx, ctx, in, &progress)
		return err
	})
	if err != nil {
		return RefreshResult{}, err
	}
	if plan.Plan.Refused {
		return refused(ctx, in, plan, res, &progress)
	}
	recordPublisher(ctx, in.Source, host)
	if len(plan.Plan.Compact) > 0 {
		progress.Phase = "starting compaction"
		res.Compact = startCompact(ctx, in.Source, res.SnapshotID, plan.Plan.Compact, host.Token)
	}
	progress.Phase = "done"
	return res, nil
}

// refreshOnHost runs the steps of Refresh that hand each other local
// snapshots, every one on the worker of ctx's session (the stager): the
// download of a missing previous snapshot, the plan and, unless it is
// refused, the tables (some of them on other workers: refreshTables; root
// is the workflow's context outside the session), the publish, the upload
// and the pruning.
func refreshOnHost(ctx, root workflow.Context, in payload.RefreshInput, progress *payload.RefreshProgress) (RefreshResult, calls.PlanRefreshResult, error) {
	// Every refresh activity heartbeats (calls.HeartbeatEvery): a
	// worker killed at any step is noticed within the heartbeat timeout.
	long := workflow.WithActivityOptions(ctx, refreshActivityOptions)
	short := workflow.WithActivityOptions(ctx, shortOptions(time.Minute))
	log := workflow.GetLogger(ctx)
	var plan calls.PlanRefreshResult
	downloaded, err := downloadCurrent(ctx, in.Source, &progress.Phase)
	if err != nil {
		return RefreshResult{}, plan, err
	}
	progress.Phase = "planning"
	if err := workflow.ExecuteActivity(long, calls.PlanRefresh, calls.PlanRefreshInput{
		Source: in.Source, TableDeltas: in.TableDeltas, MaxChainAge: in.MaxChainAge}).Get(ctx, &plan); err != nil {
		return RefreshResult{}, plan, err
	}
	var redump *RedumpSummary
	if len(plan.Plan.Redump) > 0 && !plan.Plan.Refused {
		if plan, redump, err = redumpAndReplan(ctx, in, plan, progress); err != nil {
			return RefreshResult{}, plan, err
		}
	}
	res := RefreshResult{Prev: plan.Prev, Position: plan.Cut, Refused: plan.Plan.Refused, Reasons: plan.Plan.Reasons,
		Downloaded: downloaded, Redump: redump}
	for _, t := range plan.Plan.Tables {
		res.Tables = append(res.Tables, t.String())
	}
	if plan.Plan.Refused {
		log.Warn("refresh refused", "source", in.Source, "reasons", strings.Join(plan.Plan.Reasons, "; "))
		return res, plan, nil
	}
	res.SweptParts = sweepParts(short, in.Source)
	progress.Phase = "allocating snapshot"
	var alloc calls.AllocateSnapshotResult
	if err := workflow.ExecuteActivity(short, calls.AllocateSnapshot, calls.AllocateSnapshotInput{Source: in.Source}).Get(ctx, &alloc); err != nil {
		return res, plan, err
	}
	done, shared := false, false
	defer func() {
		if !done {
			discardOnFailure(ctx, in.Source, alloc.SnapshotID, "")
			if shared {
				discardShared(root, in.Source, alloc.SnapshotID)
			}
		}
	}()
	exec := executed(plan)
	progress.Phase, progress.TablesTotal = "refreshing tables", len(exec.Plan.Tables)
	var tables []calls.ConvertTableResult
	tables, shared, err = refreshTablesBatched(ctx, root, in, alloc.SnapshotID, exec, progress)
	if err != nil {
		return res, plan, err
	}
	progress.Phase = "publishing"
	var pub calls.PublishResult
	if err := workflow.ExecuteActivity(long, calls.PublishRefresh, calls.PublishRefreshInput{Prev: plan.Prev,
		PublishInput: calls.PublishInput{Source: in.Source, SnapshotID: alloc.SnapshotID, Position: plan.Cut, Tables: tables},
	}).Get(ctx, &pub); err != nil {
		return res, plan, err
	}
	res.SnapshotID = pub.SnapshotID
	if workflow.GetVersion(ctx, viewsBesideUploadChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		writeViews(ctx, in.Source)
		if res.Upload, err = uploadSnapshot(ctx, in.Source, pub.SnapshotID, &progress.Phase); err != nil {
			return res, plan, err
		}
	} else {
		viewsWritten := startWriteViews(ctx, in.Source)
		if res.Upload, err = uploadSnapshot(ctx, in.Source, pub.SnapshotID, &progress.Phase); err != nil {
			return res, plan, err
		}
		viewsWritten()
	}
	done = true
	if redump != nil {
		removePartial(short, in.Source, redump.SnapshotID)
	}
	progress.Phase = "pruning"
	res.Pruned = prune(long, in, plan.Plan)
	return res, plan, nil
}

// executed is plan with only the tables an activity executes: a dropped
// table is left out of the new snapshot and needs none.
func executed(plan calls.PlanRefreshResult) calls.PlanRefreshResult {
	out := plan
	out.Plan.Tables = nil
	for _, t := range plan.Plan.Tables {
		if t.Action != foldplan.ActionDrop {
			out.Plan.Tables = append(out.Plan.Tables, t)
		}
	}
	return out
}

// refused ends a refused refresh: a FullBackup child in its place when a
// dump is configured and the plan had a previous snapshot or none at all,
// otherwise only the reasons.
func refused(ctx workflow.Context, in payload.RefreshInput, plan calls.PlanRefreshResult, res RefreshResult, progress *payload.RefreshProgress) (RefreshResult, error) {
	if in.NoFullBackup || !plan.DumpConfigured || plan.Cut.File == "" {
		progress.Phase = "refused: skipped"
		return res, nil
	}
	progress.Phase = "refused: full backup running in its place"
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            payload.FullBackupWorkflowID(in.Source),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	})
	var fb FullBackupResult
	err := workflow.ExecuteChildWorkflow(cctx, FullBackup, payload.FullBackupInput{Source: in.Source}).Get(ctx, &fb)
	var running *temporal.ChildWorkflowExecutionAlreadyStartedError
	switch {
	case errors.As(err, &running):
		progress.Phase = "refused: a full backup is already running"
		res.Reasons = append(res.Reasons, "a full backup of "+in.Source+" is already running")
		return res, nil
	case err != nil:
		return res, fmt.Errorf("full backup in place of the refused refresh: %w", err)
	}
	res.FullBackup = fb.SnapshotID
	progress.Phase = "done"
	return res, nil
}

// refreshAll runs RefreshTable for every table with at most in.Parallel at
// once; results keep the plan's table order.
func refreshAll(ctx workflow.Context, in payload.RefreshInput, id string, plan calls.PlanRefreshResult,
	progress *payload.RefreshProgress) ([]calls.ConvertTableResult, error) {
	tables := plan.Plan.Tables
	results := make([]calls.ConvertTableResult, len(tables))
	err := bounded(ctx, len(tables), in.Parallel, func(i int) workflow.Future {
		return workflow.ExecuteActivity(ctx, calls.RefreshTable, refreshTableInput(in, id, plan, tables[i]))
	}, func(i int, f workflow.Future) error {
		if err := f.Get(ctx, &results[i]); err != nil {
			return err
		}
		progress.TablesDone++
		return nil
	})
	return results, err
}

// prune applies the worker's retention (the Prune activity's own policy)
// and drops the .compact/ ranges the plan used or found stale; a failure
// is logged, not fatal (the snapshot is published).
func prune(ctx workflow.Context, in payload.RefreshInput, p foldplan.Plan) []string {
	var drop []foldplan.TableKey
	for _, t := range p.Tables {
		if t.DropCompacted {
			drop = append(drop, t.Key)
		}
	}
	var res calls.PruneResult
	if err := workflow.ExecuteActivity(ctx, calls.Prune, calls.PruneInput{Source: in.Source, DropCompacted: drop}).Get(ctx, &res); err != nil {
		workflow.GetLogger(ctx).Warn("prune failed", "source", in.Source, "error", err)
	}
	return res.Removed
}

// startCompact starts the Compact workflow of the published snapshot as an
// abandoned child (it outlives the refresh) and waits only for its start. A
// compaction already running is left alone: the next refresh asks again.
// host is the recreate token of the session that published the snapshot
// (nil for histories from before the sessions): Compact asks for that
// worker first, as the snapshot is on its disk.
func startCompact(ctx workflow.Context, source, id string, jobs []foldplan.CompactJob, host []byte) []string {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            payload.CompactWorkflowID(source),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	})
	f := workflow.ExecuteChildWorkflow(cctx, Compact, CompactInput{Source: source, SnapshotID: id, Tables: jobs, Host: host})
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("compaction not started", "source", source, "error", err)
		return nil
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Key.String())
	}
	return names
}

// bounded starts n futures with at most par running, calling done for each
// as it completes; it stops starting new ones after the first error, waits
// for the running ones, and returns that error as is (so its application
// error type reaches the caller).
func bounded(ctx workflow.Context, n, par int, start func(int) workflow.Future, done func(int, workflow.Future) error) error {
	running, next := 0, 0
	var firstErr error
	sel := workflow.NewSelector(ctx)
	for next < n || running > 0 {
		for firstErr == nil && running < par && next < n {
			i := next
			sel.AddFuture(start(i), func(f workflow.Future) {
				running--
				if err := done(i, f); err != nil && firstErr == nil {
					firstErr = err
				}
			})
			running++
			next++
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
	}
	return firstErr
}
