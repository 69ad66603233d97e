package restore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/internal/verify"
)

// Load is one slice of one table's load into the target: Run loads
// chunks for about Slice, then returns where the table stands (the
// caller runs the next slice until Done).
type Load struct {
	Target  *Target
	Options Options
	Job     Job
	// ChunkRows is the chunk size to start with (0: FirstChunk).
	ChunkRows int
	// Slice is how long Run loads (0: DefaultLoadSlice).
	Slice time.Duration
	// Parts is how many key ranges load at once when the table's load
	// starts (a table of fewer than 2 × PartRows rows, or without a key,
	// loads as one); PartRows 0 is DefaultPartRows.
	Parts    int
	PartRows int64
	// Stage returns the table at the job's cut staged on this machine
	// (WriteStaged, or ReadStaged of an earlier call) and the room its
	// staging took (nil when it was staged already); progress, when not
	// nil, reports the rows staged.
	Stage func(ctx context.Context, progress func(stage string, rows int64)) (Staged, *spaceneed.Step, error)
	// Progress reports the rows loaded and why the load pauses ("" when it
	// does not); nil reports nothing. The stages of HoldsTargetRows report
	// the rows the target holds (StageCheckpoint when Run begins,
	// StageLoading after each chunk, StagePaused while the load waits);
	// any other stage is the staging's (Stage), with its own count.
	Progress func(stage string, rows int64, paused string)
	Log      *slog.Logger
}

// The stages of Load.Progress.
const (
	StageCheckpoint = "checkpoint"
	StageStaging    = "staging"
	StageLoading    = "loading"
	StagePaused     = "paused"
)

// HoldsTargetRows reports whether Load.Progress's rows at stage are the
// rows the target holds (not a count of the staging's).
func HoldsTargetRows(stage string) bool {
	return stage == StageCheckpoint || stage == StageLoading || stage == StagePaused
}

// Result is where a table's load stands after a slice.
type Result struct {
	Rows    int64 // committed rows (the checkpoint)
	Total   int64 // rows of the rebuilt table
	Written int64 // rows this slice committed
	Chunks  int   // chunks this slice committed
	// ChunkRows is the chunk size the next slice starts with.
	ChunkRows int
	// ChunkMillis are the durations of this slice's chunk transactions.
	ChunkMillis []int32
	// StageMillis is how long this slice took to stage the rebuilt table
	// (0 when it was staged already).
	StageMillis int64
	// Paused says why the slice ended waiting ("" when it did not).
	Paused string
	Done   bool
	// Def is the table's definition at the moment (set when Done): what
	// the verification reads from the target.
	Def         *schema.Table
	Fingerprint string
	// Space is the staging's estimate and the staged files' bytes (nil
	// when the slice did not stage: the table was staged already).
	Space *spaceneed.Step
}

// Run loads chunks of the table for about l.Slice. The first slice
// creates the target table from its CREATE TABLE at the cut (indexes
// included) and the table's checkpoint, and splits the table into parts
// with a checkpoint each. Each chunk is one transaction that inserts the
// chunk's rows and moves its part's checkpoint, so a killed worker's
// successor skips exactly the committed rows. Before each chunk the
// throttle's signals are read; while Pause gives a reason the load waits
// (and returns after pauseReport to say why); the chunk size follows
// --chunk-time and --max-rows-per-second caps the rate.
func (l Load) Run(ctx context.Context) (Result, error) {
	if l.Progress == nil {
		l.Progress = func(string, int64, string) {}
	}
	o, job, db := l.Options, l.Job, l.Target.DB
	cp, ok, err := readCheckpoint(ctx, db, o.Bookkeeping(), job)
	if err != nil {
		return Result{}, err
	}
	if ok && cp.Done() {
		return l.loadedResult(ctx, cp)
	}
	l.Progress(StageCheckpoint, cp.RowsLoaded, "")
	staging := time.Now()
	st, staged, err := l.Stage(ctx, func(stage string, n int64) { l.Progress(stage, n, "") })
	if err != nil {
		return Result{}, err
	}
	foot := st.Foot
	stageTook := time.Since(staging)
	if !ok {
		if cp, err = l.start(ctx, foot); err != nil {
			return Result{}, err
		}
	}
	if err := cp.Matches(job.Cut.Seq, foot.Fingerprint.String(), foot.Rows); err != nil {
		return Result{}, fail(KindCheckpointConflict, err)
	}
	parts, err := l.tableParts(ctx, st, cp)
	if err != nil {
		return Result{}, err
	}
	res, err := l.loadParts(ctx, st, cp, parts)
	if err != nil {
		return res, err
	}
	if stageTook > 50*time.Millisecond {
		res.StageMillis = stageTook.Milliseconds()
	}
	res.Space = staged
	if res.Done {
		res.Def, res.Fingerprint = foot.Table, foot.Fingerprint.String()
	}
	return res, nil
}

// tableParts reads the parts of the job's table, or plans and writes them
// when its load starts (planParts).
func (l Load) tableParts(ctx context.Context, st Staged, cp Checkpoint) ([]Part, error) {
	db, schemaName := l.Target.DB, l.Options.Bookkeeping()
	parts, err := readParts(ctx, db, schemaName, l.Job)
	if err != nil || len(parts) > 0 {
		return parts, err
	}
	partRows := l.PartRows
	if partRows <= 0 {
		partRows = DefaultPartRows
	}
	if err := insertParts(ctx, db, schemaName, l.Job, planParts(st, cp, l.Parts, partRows)); err != nil {
		return nil, err
	}
	return readParts(ctx, db, schemaName, l.Job)
}

// loadParts loads the table's unfinished parts at once, each by a loader
// on its own connection for about l.Slice, and sums their results; when
// every part is loaded the table's checkpoint is recorded as loaded
// (finishTable). The first error stops the other loaders after their
// current chunk.
func (l Load) loadParts(ctx context.Context, st Staged, cp Checkpoint, parts []Part) (Result, error) {
	var mu sync.Mutex
	loaded := cp.RowsLoaded
	report := func(stage string, n int64, paused string) {
		mu.Lock()
		defer mu.Unlock()
		loaded += n
		l.Progress(stage, loaded, paused)
	}
	results := make([]Result, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	for i, p := range parts {
		results[i] = Result{Rows: p.RowsLoaded, Done: p.Done(), ChunkRows: l.ChunkRows}
		if p.Done() {
			continue
		}
		g.Go(func() error {
			res, err := l.loadPart(gctx, st, p, len(parts), report)
			results[i] = res
			return err
		})
	}
	err := g.Wait()
	res := sumResults(cp.RowsTotal, results)
	if err != nil || !res.Done {
		return res, err
	}
	if _, err := finishTable(ctx, l.Target.DB, l.Options.Bookkeeping(), l.Job); err != nil {
		return res, err
	}
	return res, nil
}

// loadPart loads one slice of part p (of share parts) on its own session.
func (l Load) loadPart(ctx context.Context, st Staged, p Part, share int, report func(string, int64, string)) (Result, error) {
	conn, release, err := session(ctx, l.Target.DB, l.Options.NoBinlog)
	if err != nil {
		return Result{}, err
	}
	defer release()
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	ld := &loader{o: l.Options, tg: l.Target, job: l.Job, conn: conn, part: p, share: share, progress: report, chunk: l.ChunkRows, slice: l.Slice, log: log}
	if err := ld.openReplicas(ctx); err != nil {
		return Result{}, err
	}
	defer ld.closeReplicas()
	return ld.run(ctx, st)
}

// sumResults is the table's result of its parts' results.
func sumResults(total int64, results []Result) Result {
	res := Result{Total: total, Done: true}
	for _, r := range results {
		res.Rows += r.Rows
		res.Written += r.Written
		res.Chunks += r.Chunks
		res.ChunkMillis = append(res.ChunkMillis, r.ChunkMillis...)
		res.Done = res.Done && r.Done
		if res.Paused == "" {
			res.Paused = r.Paused
		}
		if res.ChunkRows == 0 || (r.ChunkRows > 0 && r.ChunkRows < res.ChunkRows) {
			res.ChunkRows = r.ChunkRows
		}
	}
	return res
}

// loadedResult is the result of a table whose rows are all loaded (a
// rerun, or a retry after the last chunk): its definition from the staged
// table's footer, staged again if this machine lacks it.
func (l Load) loadedResult(ctx context.Context, cp Checkpoint) (Result, error) {
	st, _, err := l.Stage(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	return Result{Rows: cp.RowsLoaded, Total: cp.RowsTotal, Done: true, ChunkRows: l.ChunkRows,
		Def: st.Foot.Table, Fingerprint: cp.Fingerprint}, nil
}

// start creates the load table from the CREATE TABLE at the cut (the
// schema too, if missing) and the table's checkpoint, on a load session.
// An existing load table is used only when it is empty and has the
// table's columns.
func (l Load) start(ctx context.Context, foot snapshot.FooterMeta) (Checkpoint, error) {
	conn, release, err := session(ctx, l.Target.DB, l.Options.NoBinlog)
	if err != nil {
		return Checkpoint{}, err
	}
	defer release()
	job := l.Job
	exists, rows, err := tableRows(ctx, conn, job.Schema, job.Load)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("target table %s.%s: %w", job.Schema, job.Load, err)
	}
	switch {
	case exists && rows:
		return Checkpoint{}, fail(KindTargetNotEmpty, fmt.Errorf("target table %s.%s exists and holds rows; nothing was written", job.Schema, job.Load))
	case exists:
		def := *foot.Table
		def.Schema, def.Name = job.Schema, job.Load
		if err := verify.CheckColumns(ctx, conn, &def); err != nil {
			return Checkpoint{}, fail(KindTargetNotEmpty, fmt.Errorf("empty target table %s.%s is not the table at the moment: %w", job.Schema, job.Load, err))
		}
	default:
		create, err := RenameCreate(foot.CreateTable, job.Schema, job.Load)
		if err != nil {
			return Checkpoint{}, fail(KindBadInput, fmt.Errorf("table %s: %w", job.Table.Key(), err))
		}
		if job.Load != job.Name {
			create = UnnameForeignKeys(create)
		}
		for _, q := range []string{"CREATE DATABASE IF NOT EXISTS " + QuoteIdent(job.Schema), create} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return Checkpoint{}, fmt.Errorf("create %s.%s: %w", job.Schema, job.Load, err)
			}
		}
	}
	cp := Checkpoint{RestoreID: job.RestoreID, Schema: job.Schema, Table: job.Name, LoadTable: job.Load, Source: l.Options.Source,
		SourceTable: job.Table.Key().String(), CutSeq: job.Cut.Seq, Fingerprint: foot.Fingerprint.String(), RowsTotal: foot.Rows,
		State: StateLoading}
	if err := insertCheckpoint(ctx, conn, l.Options.Bookkeeping(), cp); err != nil {
		return Checkpoint{}, err
	}
	return cp, nil
}
