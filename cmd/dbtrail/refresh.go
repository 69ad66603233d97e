package main

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// tableDeltasFlag is --table-deltas / DBTRAIL_TABLE_DELTAS: "false" turns
// table deltas off (every changed table is rewritten in full), "true" keeps
// them; any other value keeps the default (on) and is reported by warn.
type tableDeltasFlag struct {
	on      bool
	invalid string
}

func (f *tableDeltasFlag) String() string { return fmt.Sprint(f.on) }
func (f *tableDeltasFlag) Type() string   { return "bool" }

// IsBoolFlag lets a bare --table-deltas mean true.
func (f *tableDeltasFlag) IsBoolFlag() bool { return true }

func (f *tableDeltasFlag) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false":
		f.on, f.invalid = false, ""
	case "true":
		f.on, f.invalid = true, ""
	default:
		f.on, f.invalid = true, v
	}
	return nil
}

// warn logs a value that was not true or false.
func (f *tableDeltasFlag) warn(log *slog.Logger) {
	if f.invalid != "" {
		log.Warn("table deltas: value is neither true nor false; keeping the default (on)",
			slog.String("value", f.invalid), slog.String("flag", "--table-deltas / "+envName("table-deltas")))
	}
}

// refreshConfig is the refresh settings shared by `dbtrail refresh` and the
// schedule that dev and worker keep. The retention policy is none of them:
// it is the worker's (retentionFlags).
type refreshConfig struct {
	deltas      tableDeltasFlag
	maxChainAge time.Duration
	noFull      bool
}

func (r *refreshConfig) register(f *pflag.FlagSet) {
	r.deltas.on = true
	f.Var(&r.deltas, "table-deltas", "write per-table delta pairs; false rewrites every changed table in full")
	f.DurationVar(&r.maxChainAge, "max-chain-age", foldplan.DefaultMaxChainAge, "rewrite a table whose chain is this old")
	f.BoolVar(&r.noFull, "no-full-backup", false, "when a refresh is refused, only report it (no full backup in its place)")
}

func (r *refreshConfig) input(source string) payload.RefreshInput {
	return payload.RefreshInput{Source: source, TableDeltas: r.deltas.on, MaxChainAge: r.maxChainAge, NoFullBackup: r.noFull}
}

// refreshSchedule is the refresh schedule of a source, every interval.
func refreshSchedule(source, taskQueue string, every time.Duration, r *refreshConfig) (temporalclient.ScheduleSpec, error) {
	sc := payload.ScheduleNamed("refresh")
	if err := sc.CheckEvery("--refresh-every", every); err != nil {
		return temporalclient.ScheduleSpec{}, err
	}
	return scheduleSpec(sc, source, taskQueue, every, r.input(source)), nil
}

func newRefreshCmd(g *globals) *cobra.Command {
	var tf temporalFlags
	var source string
	var rc refreshConfig
	var label string
	var queue bool
	cmd := &cobra.Command{
		Use:   "refresh",
		Short: "Refresh now: fold the changes since the current snapshot into a new one, and wait",
		Long: `refresh starts the Refresh workflow of a source and waits for it, showing
progress. It folds the current snapshot and the index's changes since it into a
new snapshot (unchanged tables linked, changed ones as delta pairs or rewritten),
without reading the source. A refused refresh (a schema change, a capture gap,
no previous snapshot) publishes nothing and runs a full backup in its place.
Progress is a bar on a terminal, else a line per phase and every 10 s at most.
Ctrl-C stops waiting, not the refresh: the CLI prints where to follow it.
A refresh of the source that already runs (the schedule's, the API's, another
CLI's) is followed: the CLI says which run and who started it and returns its
result. --new waits for it and then starts one more.
The refresh carries no retention policy: its prune keeps what the worker's
--keep-snapshots, --keep-days and --archive-keep-days say (given here they
are refused).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := checkNoRetentionFlags("refresh", g.fromArgs); err != nil {
				return err
			}
			rc.deltas.warn(g.log)
			c, svc, err := newJobService(cmd, g, &tf)
			if err != nil {
				return err
			}
			defer c.Close()
			req := jobs.Request{Kind: jobs.Refresh, Source: source, Label: label, Input: rc.input(source), Follow: true}
			j, err := svc.Start(ctx, req)
			if err != nil {
				return err
			}
			if j.Followed && queue {
				sayFollowed(cmd.ErrOrStderr(), j, "; --new: one more starts after it")
				if j, err = svc.After(ctx, j, req); err != nil {
					return err
				}
			}
			if j.Followed {
				sayFollowed(cmd.ErrOrStderr(), j, "")
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s job %s started (label %s, run %s)\n", j.Workflow, j.ID, j.Label, j.RunID)
			}
			run := c.GetWorkflow(ctx, j.ID, j.RunID)
			var res workflows.RefreshResult
			if err := newWaiter(cmd.ErrOrStderr(), tf.location()).wait(ctx, "Refresh", run, queryProgress(c, run, refreshProgress), &res); err != nil {
				return err
			}
			printRefresh(cmd.OutOrStdout(), res)
			return nil
		},
	}
	f := cmd.Flags()
	tf.register(f)
	f.StringVar(&source, "source", "main", "source to refresh")
	f.StringVar(&label, "label", "", "the job's label, unique per source (default refresh-<UTC time>); the job id is <source>:<label>")
	f.BoolVar(&queue, "new", false, "when a refresh of the source runs, wait for it and then start one more (default: follow it)")
	rc.register(f)
	refusedRetentionFlags(f)
	return cmd
}

// sayFollowed tells that the running refresh j is followed, which run and
// who started it, and what follows.
func sayFollowed(w io.Writer, j jobs.Job, then string) {
	fmt.Fprintf(w, "a refresh of %s is running: following job %s (run %s, started by %s)%s\n",
		j.Source, j.ID, j.RunID, cmp.Or(j.StartedBy, "another client"), then)
}

// refreshProgress shows a Refresh's progress: its tables, without a bar.
func refreshProgress(p payload.RefreshProgress) progress {
	return progress{phase: p.Phase, counts: fmt.Sprintf("%d/%d tables", p.TablesDone, p.TablesTotal)}
}

// printRefresh reports a refresh's result.
func printRefresh(w io.Writer, res workflows.RefreshResult) {
	switch {
	case res.Refused && res.FullBackup != "":
		fmt.Fprintf(w, "refresh refused; full backup %s published in its place\n", res.FullBackup)
	case res.Refused:
		fmt.Fprintln(w, "refresh refused; nothing published")
	default:
		fmt.Fprintf(w, "snapshot %s published from %s at %s:%d seq %d\n", res.SnapshotID, res.Prev, res.Position.File, res.Position.Pos, res.Position.Seq)
	}
	for _, r := range res.Reasons {
		fmt.Fprintf(w, "  reason: %s\n", r)
	}
	for _, t := range res.Tables {
		fmt.Fprintf(w, "  %s\n", t)
	}
	if len(res.Compact) > 0 {
		fmt.Fprintf(w, "  compaction started for %s\n", strings.Join(res.Compact, ", "))
	}
	if res.Downloaded != "" {
		fmt.Fprintf(w, "  previous snapshot %s downloaded from the remote store\n", res.Downloaded)
	}
	printUpload(w, res.Upload)
	if len(res.Pruned) > 0 {
		fmt.Fprintf(w, "  pruned %s\n", strings.Join(res.Pruned, ", "))
	}
}

// printUpload reports what a run uploaded to the remote store (nothing
// without one).
func printUpload(w io.Writer, up *calls.UploadSnapshotResult) {
	if up == nil || up.Location == "" {
		return
	}
	ids := make([]string, len(up.Snapshots))
	for i, s := range up.Snapshots {
		ids[i] = s.SnapshotID
	}
	fmt.Fprintf(w, "  uploaded %s to %s: %d files sent (%s), %d copied in the store (%s), %d already there; remote current %s\n",
		strings.Join(ids, ", "), up.Location, up.FilesUploaded, sizeText(up.BytesUploaded), up.FilesCopied, sizeText(up.BytesCopied),
		up.FilesSkipped, up.Current)
}

// scheduleConfig is the schedules a long-running dev or worker keeps.
type scheduleConfig struct {
	refreshEvery time.Duration
	refresh      refreshConfig
	indexHours   int
	verifyEvery  time.Duration
	retainEvery  time.Duration
	drill        drillConfig
}

func (s *scheduleConfig) register(f *pflag.FlagSet) {
	f.DurationVar(&s.refreshEvery, "refresh-every", payload.DefaultRefreshEvery, "interval of the refresh schedule (at least 1m; 0 leaves the schedule as it is)")
	s.refresh.register(f)
	f.IntVar(&s.indexHours, "index-hours", activities.DefaultIndexHours, "hours of events the index keeps; the hourly archive moves older hours to the archive location (without one nothing is dropped)")
	f.DurationVar(&s.verifyEvery, "verify-every", payload.DefaultVerifyEvery, "interval of the scheduled verify of the current snapshot against the source (at least 1h; 0 deletes the schedule)")
	f.DurationVar(&s.retainEvery, "retention-every", payload.DefaultRetentionEvery, "interval of the retention schedule; the worker that runs it applies its own --keep-snapshots, --keep-days and --archive-keep-days to every place (at least 1m; 0 deletes the schedule)")
	s.drill.register(f)
}

// specs returns the schedules to ensure for source: the refresh schedule
// (unless --refresh-every is 0), the verify and restore drill schedules
// (deleted at 0) and the hourly archive schedule. fromArgs are the flags
// given on the command line (a DSN's password is refused there).
func (s *scheduleConfig) specs(source, taskQueue string, fromArgs map[string]bool, log *slog.Logger) ([]temporalclient.ScheduleSpec, error) {
	s.refresh.deltas.warn(log)
	if s.indexHours < 1 {
		return nil, fmt.Errorf("--index-hours %d: the index keeps at least 1 hour", s.indexHours)
	}
	var specs []temporalclient.ScheduleSpec
	if s.refreshEvery != 0 {
		spec, err := refreshSchedule(source, taskQueue, s.refreshEvery, &s.refresh)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	verify, err := verifySchedule(source, taskQueue, s.verifyEvery)
	if err != nil {
		return nil, err
	}
	drill, err := s.drill.schedule(source, taskQueue)
	if err != nil {
		return nil, err
	}
	retain, err := retentionSchedule(source, taskQueue, s.retainEvery)
	if err != nil {
		return nil, err
	}
	archive := payload.ScheduleNamed("archive")
	return append(specs, verify, drill, retain,
		scheduleSpec(archive, source, taskQueue, archive.Default, payload.ArchiveInput{Source: source, IndexHours: s.indexHours})), nil
}

// scheduleSpec is schedule sc of source every interval on taskQueue, its
// runs started with input (none when nil) and the source's search
// attributes.
func scheduleSpec(sc payload.Schedule, source, taskQueue string, every time.Duration, input any) temporalclient.ScheduleSpec {
	spec := temporalclient.ScheduleSpec{ID: sc.ID(source), Every: every, Workflow: sc.Workflow, TaskQueue: taskQueue,
		Attrs: jobs.SourceAttrs(source)}
	if input != nil {
		spec.Args = []any{input}
	}
	return spec
}

// ensureSchedules registers the jobs' search attributes (the schedules set
// them), then creates or updates every schedule of specs; a spec with no
// interval deletes its schedule.
func ensureSchedules(cmd *cobra.Command, c client.Client, namespace string, specs []temporalclient.ScheduleSpec, log *slog.Logger) error {
	if err := jobs.EnsureSearchAttributes(cmd.Context(), c, namespace); err != nil {
		return err
	}
	for _, s := range specs {
		if s.Every == 0 {
			if err := temporalclient.DeleteSchedule(cmd.Context(), c, s.ID); err != nil {
				return err
			}
			continue
		}
		if err := temporalclient.EnsureSchedule(cmd.Context(), c, s); err != nil {
			return err
		}
		log.Info("schedule kept", slog.String("schedule", s.ID), slog.Duration("every", s.Every))
	}
	return nil
}
