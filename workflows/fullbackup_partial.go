package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/mydumper"
	"github.com/dbtrail/dbtrail/payload"
)

// A partial full backup (FullBackupInput.Tables) re-dumps some tables of a
// source: the ones a refresh cannot fold across a schema change. It runs
// the full backup's steps with mydumper's table list (Dump), maps the
// dump's position to the index's seq (MapPosition), converts the tables as
// a full backup does (ExactFloats, ConvertTable), and finishes the
// snapshot as a partial one (FinishPartial: manifest kind partial, under
// <source>/.partial/<id>, never current, never uploaded, not listed with
// the source's snapshots) instead of publishing it; the index records the
// re-dump for `dbtrail status`. Whoever asked for it removes it when done
// (RemovePartial); retention removes one older than
// snapshot.PartialMaxAge.

// PartialRun is what a partial full backup did.
type PartialRun struct {
	// Tables are the tables dumped, "schema.table", in the dump's order.
	Tables []string
	// Started and Finished bound the run (Finished: when its snapshot was
	// finished and recorded); Took is the difference.
	Started, Finished time.Time
	Took              time.Duration
	// Host is the worker whose backup folder holds the partial snapshot,
	// HostToken its session's recreate token (for a step that must run
	// there: opening or removing the snapshot).
	Host      string
	HostToken []byte `json:",omitempty"`
}

// partialTables checks a partial full backup's table list
// (mydumper.ParseTables) and returns it sorted without duplicates; a bad
// list is a non-retryable BadInput naming the entry.
func partialTables(names []string) ([]string, error) {
	tables, err := mydumper.ParseTables(names)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("partial full backup: "+err.Error(), payload.ErrBadInput, nil)
	}
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = t.String()
	}
	return out, nil
}

// finishPartial ends a partial full backup on its worker: the converted
// tables are finished as a partial snapshot (FinishPartial, which records
// the re-dump) and the dump folder removed.
func finishPartial(ctx, short workflow.Context, in payload.FullBackupInput, id string, dump calls.DumpResult, pos binlogpos.Position,
	tables []calls.ConvertTableResult, started time.Time, progress *payload.FullBackupProgress) (FullBackupResult, error) {
	progress.Phase = "finishing the partial snapshot"
	var fin calls.FinishPartialResult
	if err := workflow.ExecuteActivity(short, calls.FinishPartial, calls.FinishPartialInput{
		PublishInput: calls.PublishInput{Source: in.Source, SnapshotID: id, Position: pos, Tables: tables},
		Started:      started,
	}).Get(ctx, &fin); err != nil {
		return FullBackupResult{}, err
	}
	if err := workflow.ExecuteActivity(short, calls.RemoveDump, calls.RemoveDumpInput{Dir: dump.Dir}).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("dump folder not removed", "dir", dump.Dir, "error", err)
	}
	rec := fin.Redump
	return FullBackupResult{SnapshotID: fin.SnapshotID, Position: pos, Tables: len(tables), Rows: rec.Rows,
		Partial: &PartialRun{Tables: rec.Tables, Started: rec.StartedAt, Finished: rec.Finished, Took: rec.Took()}}, nil
}
