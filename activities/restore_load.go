package activities

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/room"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/verify"
	"golang.org/x/sync/errgroup"
)

// Slices of LoadTable: how long one call loads (DefaultLoadSlice) and how
// long it waits in a pause before it returns to say why (pauseReport).
const (
	DefaultLoadSlice = 5 * time.Second
	pauseReport      = 3 * time.Second
	pausePoll        = 250 * time.Millisecond
	// maxStatementBytes bounds one INSERT of a chunk (as a .sql export's).
	maxStatementBytes = sqlexport.DefaultMaxStatementBytes
)

// LoadTable loads chunks of one table into the target for about in.Slice,
// then returns where it stands (the workflow calls it again until Done).
// The table at the cut is staged once on this worker (a table file in the
// work folder, written by moment.Table.Write, kept while the restore runs)
// and read in its order with bounded memory. The first call creates the
// target table from its CREATE TABLE at the cut (indexes included) and
// the table's checkpoint. Each chunk is one transaction that inserts the
// chunk's rows and moves the checkpoint (advanceCheckpoint), so a killed
// worker's successor skips exactly the committed rows. Before each chunk
// the throttle's signals are read; while restore.Pause gives a reason the
// load waits (and returns after pauseReport to show it); the chunk size
// follows --chunk-time and --max-rows-per-second caps the rate.
func (a *Activities) LoadTable(ctx context.Context, in LoadTableInput) (LoadTableResult, error) {
	set, stop := keepAlive(ctx)
	defer stop()
	job, sp := in.Job, in.Spec
	name := job.Target()
	progress := func(stage string, rows int64, paused string) {
		set(LoadProgress{Table: name, Stage: stage, Rows: rows, Paused: paused})
	}
	tg, err := a.openTarget(ctx, sp)
	if err != nil {
		return LoadTableResult{}, err
	}
	defer tg.db.Close()
	db := tg.db
	if err := a.checkJobSchemas(tg, sp, job.Schema); err != nil {
		return LoadTableResult{}, err
	}
	cp, ok, err := readCheckpoint(ctx, db, sp.checkpointSchema(), job)
	if err != nil {
		return LoadTableResult{}, err
	}
	if ok && cp.Done() {
		return a.loadedResult(ctx, in, cp)
	}
	staging := time.Now()
	st, staged, err := a.stageTable(ctx, in, func(stage string, n int64) { progress(stage, n, "") })
	if err != nil {
		return LoadTableResult{}, err
	}
	foot := st.Foot
	stageTook := time.Since(staging)
	if !ok {
		conn, release, err := loadSession(ctx, db, sp.NoBinlog)
		if err != nil {
			return LoadTableResult{}, err
		}
		cp, err = startTable(ctx, conn, sp, job, foot)
		release()
		if err != nil {
			return LoadTableResult{}, err
		}
	}
	if err := cp.Matches(job.Cut.Seq, foot.Fingerprint.String(), foot.Rows); err != nil {
		return LoadTableResult{}, nonRetryable(ErrCheckpointConflict, err)
	}
	parts, err := a.tableParts(ctx, db, sp, job, st, cp, in.Parts)
	if err != nil {
		return LoadTableResult{}, err
	}
	res, err := a.loadParts(ctx, in, tg, st, cp, parts, progress)
	if err != nil {
		return res, err
	}
	if stageTook > 50*time.Millisecond {
		res.StageMillis = stageTook.Milliseconds()
	}
	res.Room = staged
	if res.Done {
		res.Def, res.Fingerprint = foot.Table, foot.Fingerprint.String()
	}
	return res, nil
}

// tableParts reads the parts of job's table, or plans and writes them
// when its load starts (planParts).
func (a *Activities) tableParts(ctx context.Context, db *sql.DB, sp RestoreSpec, job RestoreTableJob, st restore.Staged, cp restore.Checkpoint, want int) ([]restore.Part, error) {
	parts, err := readParts(ctx, db, sp.checkpointSchema(), job)
	if err != nil || len(parts) > 0 {
		return parts, err
	}
	if err := insertParts(ctx, db, sp.checkpointSchema(), job, planParts(st, cp, want, a.restorePartRows())); err != nil {
		return nil, err
	}
	return readParts(ctx, db, sp.checkpointSchema(), job)
}

// loadParts loads the table's unfinished parts at once, each by a loader
// on its own connection for about in.Slice, and sums their results; when
// every part is loaded the table's checkpoint is recorded as loaded
// (finishTable). The first error stops the other loaders after their
// current chunk.
func (a *Activities) loadParts(ctx context.Context, in LoadTableInput, tg openedTarget, st restore.Staged, cp restore.Checkpoint, parts []restore.Part,
	progress func(stage string, rows int64, paused string)) (LoadTableResult, error) {
	sp, job, db := in.Spec, in.Job, tg.db
	var mu sync.Mutex
	loaded := cp.RowsLoaded
	report := func(stage string, n int64, paused string) {
		mu.Lock()
		defer mu.Unlock()
		loaded += n
		progress(stage, loaded, paused)
	}
	results := make([]LoadTableResult, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	for i, p := range parts {
		results[i] = LoadTableResult{Rows: p.RowsLoaded, Done: p.Done(), ChunkRows: in.ChunkRows}
		if p.Done() {
			continue
		}
		g.Go(func() error {
			conn, release, err := loadSession(gctx, db, sp.NoBinlog)
			if err != nil {
				return err
			}
			defer release()
			l := &loader{a: a, sp: sp, tg: tg.Target, job: job, db: db, conn: conn, part: p, share: len(parts), progress: report, chunk: in.ChunkRows, slice: in.Slice}
			if err := l.openReplicas(gctx); err != nil {
				return err
			}
			defer l.closeReplicas()
			res, err := l.run(gctx, st)
			results[i] = res
			return err
		})
	}
	err := g.Wait()
	res := LoadTableResult{Total: cp.RowsTotal, Done: true}
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
	if err != nil || !res.Done {
		return res, err
	}
	if _, err := finishTable(ctx, db, sp.checkpointSchema(), job); err != nil {
		return res, err
	}
	return res, nil
}

// loadedResult is the result of a table whose rows are all loaded (a
// rerun, or a retry after the last chunk): its definition from the staged
// table's footer, staged again if this worker lacks it.
func (a *Activities) loadedResult(ctx context.Context, in LoadTableInput, cp restore.Checkpoint) (LoadTableResult, error) {
	st, _, err := a.stageTable(ctx, in, nil)
	if err != nil {
		return LoadTableResult{}, err
	}
	return LoadTableResult{Rows: cp.RowsLoaded, Total: cp.RowsTotal, Done: true, ChunkRows: in.ChunkRows,
		Def: st.Foot.Table, Fingerprint: cp.Fingerprint}, nil
}

// stagedDir is the folder a restore's table is staged in on this worker.
func (a *Activities) stagedDir(id string, tp moment.TablePlan) (string, error) {
	rel, err := snapshot.TableFile(tp.Schema, tp.Table)
	if err != nil {
		return "", nonRetryable(ErrBadInput, err)
	}
	return filepath.Join(a.restoreDir(id), filepath.FromSlash(strings.TrimSuffix(rel, ".parquet"))), nil
}

func (a *Activities) restoreDir(id string) string { return filepath.Join(a.WorkDir, "restore", id) }

// stageTable writes the table at the job's cut, sorted by its key, as
// table files in the work folder (through moment.Past: the index,
// archived hours and the snapshots local or on the store; see
// restore.WriteStaged), or reuses the ones an earlier call wrote for the
// same cut. It returns the room of a table it staged (its estimate and the
// staged files' bytes; nil when reused).
func (a *Activities) stageTable(ctx context.Context, in LoadTableInput, progress func(string, int64)) (restore.Staged, *room.Step, error) {
	tp := in.Job.Table
	dir, err := a.stagedDir(in.Job.RestoreID, tp)
	if err != nil {
		return restore.Staged{}, nil, err
	}
	if st, ok := restore.ReadStaged(dir, in.Job.Cut); ok {
		return st, nil, nil
	}
	eng, releaseEngine, err := a.engine(ctx)
	if err != nil {
		return restore.Staged{}, nil, err
	}
	failed := true
	defer func() { releaseEngine(failed) }()
	past := a.past(ctx, in.Spec.Source)
	cat, err := past.Catalog(ctx)
	if err != nil {
		return restore.Staged{}, nil, nonRetryable(ErrBadInput, err)
	}
	est, err := a.checkRebuildRoom(ctx, cat, in.Spec.Source, tp, dir)
	if err != nil {
		return restore.Staged{}, nil, err
	}
	rb := past.Rebuilder(eng, cat)
	t, err := rb.Open(ctx, tp, progress)
	if err != nil {
		return restore.Staged{}, nil, momentErr(fmt.Errorf("rebuild %s at %s: %w", tp.Key(), in.Spec.At, err))
	}
	defer t.Close()
	cut, err := json.Marshal(in.Job.Cut)
	if err != nil {
		return restore.Staged{}, nil, err
	}
	meta := snapshot.FooterMeta{CreateTable: t.Footer.CreateTable, Position: in.Job.Cut.Position(), SnapshotID: tp.Snapshot,
		Source: in.Spec.Source, Extra: [][2]string{{snapshot.KeyAt, in.Spec.At}, {snapshot.KeyCut, string(cut)}, {snapshot.KeyBaseSnapshot, tp.Snapshot}}}
	st, err := restore.WriteStaged(ctx, dir, t, meta, in.Job.Cut, progress)
	if err != nil {
		return restore.Staged{}, nil, stagedErr(momentErr(fmt.Errorf("rebuild %s at %s: %w", tp.Key(), in.Spec.At, err)))
	}
	failed = false
	a.log(ctx).Info("restore table staged", "table", tp.Key().String(), "rows", st.Foot.Rows, "runs", len(st.Runs), "events", t.Events)
	return st, room.Record(room.KindStage, est, filesSize(st.Dir, st.Runs)), nil
}

// startTable creates the load table from the CREATE TABLE at the cut (the
// schema too, if missing) and the table's checkpoint. An existing load
// table is used only when it is empty and has the table's columns.
func startTable(ctx context.Context, conn *sql.Conn, sp RestoreSpec, job RestoreTableJob, foot snapshot.FooterMeta) (restore.Checkpoint, error) {
	exists, rows, err := tableRows(ctx, conn, job.Schema, job.Load)
	if err != nil {
		return restore.Checkpoint{}, fmt.Errorf("target table %s.%s: %w", job.Schema, job.Load, err)
	}
	switch {
	case exists && rows:
		return restore.Checkpoint{}, nonRetryable(ErrTargetNotEmpty, fmt.Errorf("target table %s.%s exists and holds rows; nothing was written", job.Schema, job.Load))
	case exists:
		def := *foot.Table
		def.Schema, def.Name = job.Schema, job.Load
		if err := verify.CheckColumns(ctx, conn, &def); err != nil {
			return restore.Checkpoint{}, nonRetryable(ErrTargetNotEmpty, fmt.Errorf("empty target table %s.%s is not the table at the moment: %w", job.Schema, job.Load, err))
		}
	default:
		create, err := restore.RenameCreate(foot.CreateTable, job.Schema, job.Load)
		if err != nil {
			return restore.Checkpoint{}, nonRetryable(ErrBadInput, fmt.Errorf("table %s: %w", job.Table.Key(), err))
		}
		if job.Load != job.Name {
			create = restore.UnnameForeignKeys(create)
		}
		for _, q := range []string{"CREATE DATABASE IF NOT EXISTS " + restore.QuoteIdent(job.Schema), create} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return restore.Checkpoint{}, fmt.Errorf("create %s.%s: %w", job.Schema, job.Load, err)
			}
		}
	}
	cp := restore.Checkpoint{RestoreID: job.RestoreID, Schema: job.Schema, Table: job.Name, LoadTable: job.Load, Source: sp.Source,
		SourceTable: job.Table.Key().String(), CutSeq: job.Cut.Seq, Fingerprint: foot.Fingerprint.String(), RowsTotal: foot.Rows,
		State: restore.StateLoading}
	if err := insertCheckpoint(ctx, conn, sp.checkpointSchema(), cp); err != nil {
		return restore.Checkpoint{}, err
	}
	return cp, nil
}

// stagedErr classifies the errors of a staged table (restore.Staged):
// a key that cannot order the rows is bad input, a key text that cannot
// be read back a checkpoint of another table; both are never retried.
func stagedErr(err error) error {
	switch {
	case errors.Is(err, restore.ErrKeyDef):
		return nonRetryable(ErrBadInput, err)
	case errors.Is(err, restore.ErrKeyText):
		return nonRetryable(ErrCheckpointConflict, err)
	}
	return err
}
