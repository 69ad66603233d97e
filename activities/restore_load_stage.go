package activities

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// stageTable writes the table at the job's cut, sorted by its key, as
// table files in the worker's work folder (through moment.Past: the index,
// archived hours and the snapshots local or on the store; see
// restore.WriteStaged), or reuses the ones an earlier call wrote for the
// same cut. It returns the room of a table it staged (its estimate and the
// staged files' bytes; nil when reused).
func (a *Activities) stageTable(ctx context.Context, in calls.LoadTableInput, progress func(string, int64)) (restore.Staged, *spaceneed.Step, error) {
	tp := in.Job.Table
	dir, err := restore.StagedDir(a.restoreDir(in.Job.RestoreID), tp)
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
		return restore.Staged{}, nil, nonRetryable(payload.ErrBadInput, err)
	}
	est, err := a.checkRebuildSpace(ctx, cat, in.Spec.Source, tp, dir)
	if err != nil {
		return restore.Staged{}, nil, err
	}
	rb := past.Rebuilder(eng, cat)
	t, err := rb.Open(ctx, tp, progress)
	if err != nil {
		return restore.Staged{}, nil, momentErr(fmt.Errorf("rebuild %s at %s: %w", tp.Key(), in.Spec.At, err))
	}
	defer t.Close()
	meta, err := restore.StagedMeta(t.Footer.CreateTable, in.Spec.Source, in.Spec.At, tp.Snapshot, in.Job.Cut)
	if err != nil {
		return restore.Staged{}, nil, err
	}
	st, err := restore.WriteStaged(ctx, dir, t, meta, in.Job.Cut, progress)
	if err != nil {
		return restore.Staged{}, nil, restore.StagedErr(momentErr(fmt.Errorf("rebuild %s at %s: %w", tp.Key(), in.Spec.At, err)))
	}
	failed = false
	a.log(ctx).Info("restore table staged", "table", tp.Key().String(), "rows", st.Foot.Rows, "runs", len(st.Runs), "events", t.Events)
	return st, spaceneed.Record(spaceneed.KindStage, est, filesSize(st.Dir, st.Runs)), nil
}
