package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/foldplan"
)

// CompactInput names the snapshot whose chains reached foldplan.CompactAt
// entries, and what the plan merges of each of those tables.
type CompactInput struct {
	Source     string
	SnapshotID string
	Tables     []foldplan.CompactJob
}

// CompactResult lists the ranges written.
type CompactResult struct {
	Ranges []string // "schema.table range"
}

// Compact merges, per table, the chain entries the refresh's plan chose (all
// but the entry that refresh added) of in.SnapshotID into one range pair
// under .compact/, one table at a time.
// It never touches a published snapshot; the next refresh links the range.
func Compact(ctx workflow.Context, in CompactInput) (CompactResult, error) {
	actx := workflow.WithActivityOptions(ctx, refreshActivityOptions)
	var res CompactResult
	for _, j := range in.Tables {
		var r activities.CompactTableResult
		if err := workflow.ExecuteActivity(actx, a.CompactTable, activities.CompactTableInput{
			Source: in.Source, SnapshotID: in.SnapshotID, Schema: j.Key.Schema, Table: j.Key.Table, Merge: j.Merge}).Get(ctx, &r); err != nil {
			return res, err
		}
		if r.Range != "" {
			res.Ranges = append(res.Ranges, j.Key.String()+" "+r.Range)
		}
	}
	return res, nil
}
