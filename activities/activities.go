package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/payload"
)

// Source is one captured server as the activities see it.
type Source struct {
	Name string
	// DSN is a go-sql-driver DSN of a user that may dump (SELECT, RELOAD,
	// LOCK TABLES, REPLICATION CLIENT). Its password is passed to mydumper
	// in a 0600 defaults file, never on its command line.
	DSN string
	// DumpThreads is mydumper's --threads (default 2).
	DumpThreads int
}

// Activities are the I/O steps of dbtrail's workflows, with what they need.
type Activities struct {
	Sources map[string]Source
	Index   *index.Store
	// BackupDir holds <source>/snapshots, <source>/current, <source>/.staging.
	BackupDir string
	// WorkDir holds dumps while they are converted.
	WorkDir string
	// Mydumper is the mydumper binary ("mydumper" on PATH when empty).
	Mydumper string
	// DumpStall is how long mydumper may make no progress (no output, no
	// dump bytes) before Dump kills it and fails the attempt (0:
	// DefaultDumpStall).
	DumpStall time.Duration
	// DumpHang is how long mydumper may make no progress after it took its
	// snapshot, while the source runs no query, before Dump runs it again
	// (0: DefaultDumpHang).
	DumpHang time.Duration
	// FoldMemory is DuckDB's memory limit for a refresh or compaction of one
	// table (default fold.DefaultMemoryLimit); beyond it DuckDB spills to
	// the work folder.
	FoldMemory string
	// RestorePartRows is the fewest rows of a part of a restored table
	// (LoadTableInput.Parts); 0 is DefaultRestorePartRows.
	RestorePartRows int64
	// Engines is the worker's pool of fold engines (NewEnginePool over
	// WorkDir and FoldMemory), closed by the worker when it stops; nil opens
	// an engine per activity.
	Engines *EnginePool
	// Remote is the object store that keeps a copy of every published
	// snapshot (--archive-url; package remote has the layout); nil keeps
	// snapshots in BackupDir only.
	Remote storage.Store
	// Runs tells whether a workflow run still runs (the worker's Temporal
	// client); with it AllocateSnapshot removes staging folders whose run
	// is gone. Nil removes none.
	Runs RunChecker
	// Jobs lists the running jobs that read a source (the worker's
	// Temporal client); retention removes nothing of a source while one
	// runs. Nil: none is known (tests of the activities alone).
	Jobs JobLister
	// Identity is the worker's Temporal identity: besides the shared task
	// queue it polls its own, WorkerQueue(task queue, Identity), where a
	// refresh staged on another worker places some of its tables. ""
	// polls none: no table of another worker's refresh comes here.
	Identity string
	// Workers lists the live workers of a task queue (the worker's
	// Temporal client); nil: a refresh shares no table.
	Workers WorkerLister
	// Retention is this worker's retention policy (the worker's
	// --keep-snapshots, --keep-days, --archive-keep-days; docs/retention.md):
	// the refresh's prune, the retention a refresh step short of room runs,
	// and the Retention workflow apply it. No workflow input carries one.
	// The zero policy keeps every snapshot and every archived hour.
	Retention retention.Policy
	// Disk measures free space before a step writes (disk.Free when nil).
	Disk disk.Probe
	// Targets are the restore targets this worker's operator configured
	// (--restore-targets): the only servers a restore writes into, by
	// name. Nil: none (every named restore is refused).
	Targets *target.Set
	// AdHocTargets lets a restore give its target as an endpoint (`dbtrail
	// restore --target-dsn` on this machine), whose password file must be
	// in AdHocSecrets (target.SecretsDir). Off by default.
	AdHocTargets bool
	AdHocSecrets string
	Log          *slog.Logger
}

func (a *Activities) source(name string) (Source, error) {
	s, ok := a.Sources[name]
	if !ok {
		return Source{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("source %q is not configured on this worker", name), payload.ErrUnknownSource, nil)
	}
	return s, nil
}

func (a *Activities) sourceDir(source string) string { return filepath.Join(a.BackupDir, source) }

func (a *Activities) log(ctx context.Context) *slog.Logger {
	l := a.Log
	if l == nil {
		l = slog.Default()
	}
	if !activity.IsActivity(ctx) {
		return l // called outside an activity (a plan for status)
	}
	info := activity.GetInfo(ctx)
	return l.With(slog.String("activity", info.ActivityType.Name), slog.String("workflow_id", info.WorkflowExecution.ID))
}

// MapPosition maps a dump's binlog position to the index's seq. While
// capture has not passed the position it waits, heartbeating; when the index
// cannot cover the position (capture started after it, or a gap covers it)
// the backup is refused for good.
func (a *Activities) MapPosition(ctx context.Context, in calls.MapPositionInput) (calls.MapPositionResult, error) {
	seq, err := a.waitSeqAt(ctx, in.Source, in.Position.Coords())
	if err != nil {
		return calls.MapPositionResult{}, err
	}
	out := in.Position
	out.Seq = seq
	return calls.MapPositionResult{Position: out}, nil
}

// waitSeqAt returns the seq of the last captured transaction at or before
// pos (index.Store.SeqAt), waiting, heartbeating, while capture has not
// passed it. A position the index cannot cover is a non-retryable
// PositionNotCovered error.
func (a *Activities) waitSeqAt(ctx context.Context, source string, pos binlogpos.Position) (uint64, error) {
	for {
		seq, err := a.Index.SeqAt(ctx, source, pos)
		var nc *index.NotCoveredError
		switch {
		case err == nil:
			return seq, nil
		case errors.As(err, &nc):
			return 0, temporal.NewNonRetryableApplicationError(nc.Error(), payload.ErrPositionNotCovered, err)
		case !errors.Is(err, index.ErrNotCaughtUp):
			return 0, err
		}
		activity.RecordHeartbeat(ctx, "waiting for capture to reach "+pos.String())
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// RemoveDump deletes a dump folder; a folder already gone is success.
func (a *Activities) RemoveDump(ctx context.Context, in calls.RemoveDumpInput) error {
	if in.Dir == "" || !isWithin(a.WorkDir, in.Dir) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("refusing to remove %q outside the work folder %s", in.Dir, a.WorkDir), payload.ErrBadPath, nil)
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return fmt.Errorf("remove dump %s: %w", in.Dir, err)
	}
	return nil
}

// isWithin reports whether path lies inside dir.
func isWithin(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !filepath.IsAbs(rel) && len(rel) > 0 && rel[0] != '.'
}
