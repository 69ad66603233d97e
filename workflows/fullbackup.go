// Package workflows holds dbtrail's Temporal workflows. Workflows only
// decide: every read or write is an activity (package activities), so a
// workflow replays deterministically from its history.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/payload"
)

// FullBackupResult is the published snapshot.
type FullBackupResult struct {
	SnapshotID string
	Position   binlogpos.Position
	Tables     int
	Rows       int64
	Skipped    []string
	// FloatsAsDumped names the tables whose FLOAT values keep the dump's 6
	// significant digits, with the reason (activities.ExactFloats).
	FloatsAsDumped []string `json:",omitempty"`
	// Upload is what went to the remote store (nil for runs from before
	// the step; Location "" on a worker without a remote store).
	Upload *calls.UploadSnapshotResult `json:",omitempty"`
	// Partial is set for a partial full backup (FullBackupInput.Tables):
	// SnapshotID is then the partial snapshot's.
	Partial *PartialRun `json:",omitempty"`
}

// exactFloatsChange is the version id of the full backup's step that makes
// FLOAT values exact (ExactFloats), behind workflow.GetVersion.
const exactFloatsChange = "exact-floats"

// FullBackup dumps the source with mydumper, maps the dump's binlog position
// to the index's seq, converts every table to Parquet, publishes the
// snapshot (manifest last, then the current pointer) and uploads it to the
// worker's remote store, if any. Every step runs on one worker (a session,
// onOneHost): when that worker dies, the backup starts over under a new
// snapshot id on another worker.
func FullBackup(ctx workflow.Context, in payload.FullBackupInput) (FullBackupResult, error) {
	progress := payload.FullBackupProgress{Phase: "allocating snapshot"}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.FullBackupProgress, error) { return progress, nil }); err != nil {
		return FullBackupResult{}, err
	}
	if in.Parallel <= 0 {
		in.Parallel = 2
	}
	var prefer []byte
	if len(in.Tables) > 0 {
		tables, err := partialTables(in.Tables)
		if err != nil {
			return FullBackupResult{}, err
		}
		in.Tables, prefer = tables, in.PreferHost
	}
	started := workflow.Now(ctx)
	var res FullBackupResult
	host, err := onOneHost(ctx, prefer, func(sctx workflow.Context) error {
		progress = payload.FullBackupProgress{Phase: "allocating snapshot"}
		var err error
		res, err = fullBackupOnHost(sctx, in, started, &progress)
		return err
	})
	if err != nil {
		return FullBackupResult{}, err
	}
	if res.Partial != nil {
		res.Partial.Host, res.Partial.HostToken = host.Host, host.Token
		progress.Phase = "done"
		return res, nil
	}
	recordPublisher(ctx, in.Source, host)
	progress.Phase = "done"
	return res, nil
}

// fullBackupOnHost runs the steps of FullBackup, every one on the worker of
// ctx's session (they hand each other the dump and staging folders).
func fullBackupOnHost(ctx workflow.Context, in payload.FullBackupInput, started time.Time, progress *payload.FullBackupProgress) (FullBackupResult, error) {
	short := workflow.WithActivityOptions(ctx, shortOptions(5*time.Minute))
	long := workflow.WithActivityOptions(ctx, longOptions(12*time.Hour, 30*time.Second, 2*time.Minute))

	var alloc calls.AllocateSnapshotResult
	if err := workflow.ExecuteActivity(short, calls.AllocateSnapshot, calls.AllocateSnapshotInput{Source: in.Source}).Get(ctx, &alloc); err != nil {
		return FullBackupResult{}, err
	}
	var dump calls.DumpResult
	done := false
	defer func() {
		if !done {
			discardOnFailure(ctx, in.Source, alloc.SnapshotID, dump.Dir)
		}
	}()
	progress.Phase = "dumping"
	if err := workflow.ExecuteActivity(long, calls.Dump, calls.DumpInput{Source: in.Source, SnapshotID: alloc.SnapshotID, Tables: in.Tables}).Get(ctx, &dump); err != nil {
		return FullBackupResult{}, err
	}
	progress.Phase = "waiting for capture to pass the dump position"
	var mapped calls.MapPositionResult
	if err := workflow.ExecuteActivity(long, calls.MapPosition, calls.MapPositionInput{Source: in.Source, Position: dump.Position}).Get(ctx, &mapped); err != nil {
		return FullBackupResult{}, err
	}
	floats, err := exactFloats(ctx, long, in, dump, mapped.Position, progress)
	if err != nil {
		return FullBackupResult{}, err
	}
	progress.Phase = "converting tables"
	progress.TablesTotal = len(dump.Tables)
	tables, err := convertAll(long, in, alloc.SnapshotID, dump, mapped.Position, floats.Files, progress)
	if err != nil {
		return FullBackupResult{}, err
	}
	if len(in.Tables) > 0 {
		res, err := finishPartial(ctx, short, in, alloc.SnapshotID, dump, mapped.Position, tables, started, progress)
		done = err == nil
		if err == nil {
			res.FloatsAsDumped = floats.AsDumped
		}
		return res, err
	}
	progress.Phase = "publishing"
	var pub calls.PublishResult
	if err := workflow.ExecuteActivity(short, calls.Publish, calls.PublishInput{
		Source: in.Source, SnapshotID: alloc.SnapshotID, Position: mapped.Position, Tables: tables,
	}).Get(ctx, &pub); err != nil {
		return FullBackupResult{}, err
	}
	writeViews(ctx, in.Source)
	if err := workflow.ExecuteActivity(short, calls.RemoveDump, calls.RemoveDumpInput{Dir: dump.Dir}).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("dump folder not removed", "dir", dump.Dir, "error", err)
	}
	upload, err := uploadSnapshot(ctx, in.Source, pub.SnapshotID, &progress.Phase)
	if err != nil {
		return FullBackupResult{}, err
	}
	done = true
	return FullBackupResult{SnapshotID: pub.SnapshotID, Position: mapped.Position, Tables: len(tables),
		Rows: progress.Rows, Skipped: dump.SkippedViews, FloatsAsDumped: floats.AsDumped, Upload: upload}, nil
}

// exactFloats runs ExactFloats on the dump (histories from before it
// existed replay without it: no fix files).
func exactFloats(ctx, long workflow.Context, in payload.FullBackupInput, dump calls.DumpResult, pos binlogpos.Position,
	progress *payload.FullBackupProgress) (calls.ExactFloatsResult, error) {
	out := calls.ExactFloatsResult{Files: make([]string, len(dump.Tables))}
	if workflow.GetVersion(ctx, exactFloatsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return out, nil
	}
	progress.Phase = "reading exact FLOAT values"
	err := workflow.ExecuteActivity(long, calls.ExactFloats, calls.ExactFloatsInput{
		Source: in.Source, DumpDir: dump.Dir, Tables: dump.Tables, Position: pos}).Get(ctx, &out)
	if err == nil && len(out.Files) != len(dump.Tables) {
		err = temporal.NewNonRetryableApplicationError("ExactFloats returned a fix file list of another length", payload.ErrBadPlan, nil)
	}
	return out, err
}

// convertAll converts every table with at most in.Parallel at once; results
// keep the dump's table order so the manifest does not depend on timing.
func convertAll(ctx workflow.Context, in payload.FullBackupInput, id string, dump calls.DumpResult,
	pos binlogpos.Position, floats []string, progress *payload.FullBackupProgress) ([]calls.ConvertTableResult, error) {
	results := make([]calls.ConvertTableResult, len(dump.Tables))
	err := bounded(ctx, len(dump.Tables), in.Parallel, func(i int) workflow.Future {
		return workflow.ExecuteActivity(ctx, calls.ConvertTable, calls.ConvertTableInput{
			Source: in.Source, SnapshotID: id, DumpDir: dump.Dir, Table: dump.Tables[i], Position: pos, Floats: floats[i]})
	}, func(i int, f workflow.Future) error {
		if err := f.Get(ctx, &results[i]); err != nil {
			return err
		}
		progress.TablesDone++
		progress.Rows += results[i].Rows
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}
