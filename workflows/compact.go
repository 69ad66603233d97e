package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// CompactInput names the snapshot whose chains reached foldplan.CompactAt
// entries, and what the plan merges of each of those tables.
type CompactInput struct {
	Source     string
	SnapshotID string
	Tables     []foldplan.CompactJob
	// Host is the recreate token of the refresh's session (nil from a
	// refresh that ran without one): the worker whose disk has the
	// snapshot.
	Host []byte `json:",omitempty"`
}

// CompactResult lists the ranges written.
type CompactResult struct {
	Ranges []string // "schema.table range"
}

// Compact merges, per table, the chain entries the refresh's plan chose (all
// but the entry that refresh added) of in.SnapshotID into one range pair
// under .compact/, one table at a time.
// It never touches a published snapshot; the next refresh links the range.
// It runs on one worker (a session), the refresh's first (in.Host): .compact/
// is local, so only refreshes on that worker's machine link the ranges. On
// a worker whose disk lacks the snapshot (the refresh's worker is gone) it
// ends without ranges: the next refresh asks again.
func Compact(ctx workflow.Context, in CompactInput) (CompactResult, error) {
	var res CompactResult
	_, err := onOneHost(ctx, in.Host, func(sctx workflow.Context) error {
		var err error
		res, err = compactOnHost(sctx, in)
		return err
	})
	return res, err
}

// compactOnHost compacts in.Tables on the worker of ctx's session. A
// snapshot gone from that worker's disk ends the compaction without error
// (for histories from before the sessions, it fails it as it did).
func compactOnHost(ctx workflow.Context, in CompactInput) (CompactResult, error) {
	actx := workflow.WithActivityOptions(ctx, refreshActivityOptions)
	var res CompactResult
	for _, j := range in.Tables {
		var r calls.CompactTableResult
		if err := workflow.ExecuteActivity(actx, calls.CompactTable, calls.CompactTableInput{
			Source: in.Source, SnapshotID: in.SnapshotID, Schema: j.Key.Schema, Table: j.Key.Table, Merge: j.Merge}).Get(ctx, &r); err != nil {
			if snapshotGone(err) && workflow.GetSessionInfo(ctx) != nil {
				workflow.GetLogger(ctx).Warn("snapshot not on this worker's disk; compaction skipped",
					"snapshot", in.SnapshotID, "host", workflow.GetSessionInfo(ctx).HostName)
				return res, nil
			}
			return res, err
		}
		if r.Range != "" {
			res.Ranges = append(res.Ranges, j.Key.String()+" "+r.Range)
		}
	}
	return res, nil
}

// snapshotGone reports whether err is an activity's SnapshotGone error.
func snapshotGone(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == payload.ErrSnapshotGone
}
