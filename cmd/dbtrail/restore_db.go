package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// restoreFlags are the flags of `dbtrail restore`.
type restoreFlags struct {
	m  momentFlags
	at string
	// targetName is --target: a restore target configured on the workers.
	targetName          string
	target              dsnFlag
	replicas            []string
	replicaPasswordFile string
	spec                payload.RestoreSpec
	slice               time.Duration
}

func newRestoreCmd(g *globals) *cobra.Command {
	r := &restoreFlags{target: dsnFlag{name: "target-dsn"}}
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Load the tables as they were at a moment T into a live MySQL/MariaDB server, and wait",
		Long: `restore starts the Restore workflow and waits for it, showing progress. Every
table (or --schema / --table) is rebuilt as it was at moment T (the forms and
refusals of export --at) and loaded into the target server: created from its
CREATE TABLE at T, then loaded in chunks, each one transaction that also moves
the table's checkpoint in the bookkeeping table <checkpoint-schema>.dbtrail_restore,
so a killed worker goes on after the last committed chunk. At the end every table
is fingerprinted in the target and compared with the rebuilt table.

The target is named: --target NAME is one of the restore targets the workers'
operator configured (--restore-targets of dbtrail worker/dev: the server, its
password file, the schemas a restore may write there, whether --replace is
allowed, its replicas and throttle query). --target-dsn instead names a server
ad hoc, for a person on the worker's own machine, where the worker allows it
(--allow-ad-hoc-targets; off by default). The source server is never a target.

It refuses a target table that exists and holds rows, unless --replace (load a
twin, verify it, swap it in with RENAME TABLE; the old table is kept as
_dbtrail_old_<name>) or --into-schema (restore beside it; {schema} stands for
the source table's schema). Loading pauses while a --replica-dsn lags more than
--max-lag or is not replicating, while the throttle query returns a value above
0 or while Threads_running passes --max-load; the chunk size follows --chunk-time
and --max-rows-per-second caps the rate. An ad-hoc target's password comes from
the environment (DBTRAIL_TARGET_DSN) or --target-password-file, never the
command line; it reaches the worker as a 0600 file in the user's cache folder
(see docs/restore.md). Ctrl-C stops waiting, not
the run; a cancelled run keeps what it loaded, and running the same restore
again goes on from the checkpoints (a finished one writes 0 rows).`,
		Example: "  dbtrail restore --target scratch --at '2026-11-29 10:41:59' --table shop.orders --into-schema shop_restored\n" +
			"  dbtrail restore --target db1 --at 0-1-5123 --schema shop --replace\n" +
			"  DBTRAIL_TARGET_DSN='dba:secret@tcp(db1:3306)/' dbtrail restore --at latest --schema shop --into-schema shop_restored   # ad hoc: the worker needs --allow-ad-hoc-targets",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRestore(cmd, g, r) },
	}
	f := cmd.Flags()
	r.m.register(f)
	f.StringVar(&r.targetName, "target", "", "the restore target, by the name the workers' --restore-targets gives it")
	r.target.register(f, "ad-hoc target server (instead of --target; the worker must allow ad-hoc targets)")
	f.StringArrayVar(&r.m.tables, "table", nil, "only this table, as schema.table (repeatable)")
	f.StringVar(&r.at, "at", "", "the moment T (time, seq:N, file:pos, GTID or latest)")
	f.StringArrayVar(&r.replicas, "replica-dsn", nil, "a replica of an ad-hoc target whose lag pauses the load (repeatable; no password here; a named target's replicas are its configuration)")
	f.StringVar(&r.replicaPasswordFile, "replica-password-file", "", "file holding the ad-hoc replicas' password")
	f.StringVar(&r.spec.IntoSchema, "into-schema", "", "restore into this schema ({schema} stands for the source table's schema)")
	f.BoolVar(&r.spec.Replace, "replace", false, "load into a twin table and swap it with the existing one at the end")
	f.StringVar(&r.spec.CheckpointSchema, "checkpoint-schema", restore.DefaultCheckpointSchema, "schema of the bookkeeping table dbtrail_restore in the target")
	f.BoolVar(&r.spec.NoBinlog, "no-binlog", false, "load with sql_log_bin=0 (needs SUPER or BINLOG ADMIN; replicas then do not get the rows)")
	f.DurationVar(&r.spec.Limits.ChunkTime, "chunk-time", throttle.DefaultChunkTime, "time one chunk's transaction aims at")
	f.DurationVar(&r.spec.Limits.MaxLag, "max-lag", throttle.DefaultMaxLag, "pause while a --replica-dsn lags more")
	f.IntVar(&r.spec.Limits.MaxLoad, "max-load", throttle.DefaultMaxLoad, "pause while the target's Threads_running is above this (0: no limit)")
	f.IntVar(&r.spec.Limits.MaxRowsPerSecond, "max-rows-per-second", 0, "cap on each table's load rate (0: none)")
	f.StringVar(&r.spec.ThrottleQuery, "throttle-query", "", "a query on an ad-hoc target; the load pauses while it returns a value above 0 (a named target's is its configuration)")
	f.DurationVar(&r.slice, "slice", restore.DefaultLoadSlice, "how long one LoadTable activity loads before it reports")
	f.BoolVar(&r.spec.Drill, "drill", false, "restore drill: restore (latest unless --at) into new schemas dbtrail_drill_<schema>, verify, drop them")
	return cmd
}

// runRestore checks the flags, starts the Restore workflow and waits.
func runRestore(cmd *cobra.Command, g *globals, r *restoreFlags) error {
	if r.spec.Drill && r.at == "" {
		r.at = "latest"
	}
	if err := checkMoment("at", r.at); err != nil {
		return err
	}
	if r.spec.Drill {
		if r.spec.Replace || r.spec.IntoSchema != "" {
			return fmt.Errorf("--drill restores into new schemas of its own: drop --replace and --into-schema")
		}
	}
	spec := r.spec
	spec.Source, spec.At = r.m.source, r.at
	var err error
	if spec.Schemas, spec.Tables, err = r.m.selection(); err != nil {
		return err
	}
	if err := checkRestoreBounds(r.m.parallel, spec); err != nil {
		return err
	}
	addr, cleanups, err := r.targetRef(&spec, g.fromArgs)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	in := payload.RestoreInput{RestoreSpec: spec, Parallel: r.m.parallel, Slice: r.slice}
	c, run, err := startRestore(cmd, g, r, in, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var res workflows.RestoreResult
	err = newWaiter(cmd.ErrOrStderr(), r.m.tf.location()).wait(ctx, "Restore", run, queryProgress(c, run, restoreDBProgress), &res)
	var failed *runFailedError
	if errors.As(err, &failed) && !spec.Drill {
		printStopped(ctx, cmd.OutOrStdout(), c, run, spec)
	}
	if err == nil || errors.As(err, &failed) { // the run ended: its password files are not needed any more
		for _, c := range cleanups {
			c()
		}
	}
	if err != nil {
		return err
	}
	printRestoreDB(cmd.OutOrStdout(), spec, res)
	return nil
}

// targetRef sets spec's target from the flags: --target (a configured
// target, by name), or --target-dsn (ad hoc: its password and its
// replicas' written to 0600 files of the secrets folder, which the
// returned cleanups remove). It returns how the target is named for
// "one restore per target at a time".
func (r *restoreFlags) targetRef(spec *payload.RestoreSpec, fromArgs map[string]bool) (string, []func(), error) {
	switch {
	case r.targetName != "" && r.target.value != "":
		return "", nil, errors.New("give --target (a target the workers know) or --target-dsn (ad hoc), not both")
	case r.targetName != "":
		if len(r.replicas) > 0 || spec.ThrottleQuery != "" {
			return "", nil, fmt.Errorf("--replica-dsn and --throttle-query are for an ad-hoc target: target %s's replicas and throttle query are its configuration on the workers", r.targetName)
		}
		if err := jobs.CheckName("--target", r.targetName); err != nil {
			return "", nil, err
		}
		spec.Target = payload.TargetRef{Name: r.targetName}
		return r.targetName, nil, nil
	case r.target.value == "":
		return "", nil, fmt.Errorf("--target (a restore target the workers know, or %s) is required; or --target-dsn for an ad-hoc target", envName("target"))
	}
	ep, addr, cleanup, err := endpointOf(r.target.value, "target-dsn", r.target.passwordFile, fromArgs)
	if err != nil {
		return "", nil, err
	}
	spec.Target = payload.TargetRef{AdHoc: &ep}
	cleanups := []func(){cleanup}
	for _, d := range r.replicas {
		rep, _, rc, err := endpointOf(d, "replica-dsn", r.replicaPasswordFile, fromArgs)
		if err != nil {
			return "", nil, err
		}
		spec.Replicas = append(spec.Replicas, rep)
		cleanups = append(cleanups, rc)
	}
	return addr, cleanups, nil
}

// checkRestoreBounds refuses --parallel and the limits outside their
// bounds (the worker refuses them too).
func checkRestoreBounds(parallel int, spec payload.RestoreSpec) error {
	if parallel < 0 || parallel > payload.MaxRestoreParallel {
		return fmt.Errorf("--parallel %d: want 0 (default) to %d", parallel, payload.MaxRestoreParallel)
	}
	return spec.Limits.Check()
}

// startRestore starts the Restore workflow: a restore as a job under the
// jobs rules (--label unique per source, one restore per source and one
// per target at a time); a drill under its own id, so that a scheduled
// drill never holds up a restore. A rerun of a restore under a new label
// goes on from the target's checkpoints (they are keyed by the restore's
// source, cut, mode and schema, not by the job).
func startRestore(cmd *cobra.Command, g *globals, r *restoreFlags, in payload.RestoreInput, addr string) (client.Client, client.WorkflowRun, error) {
	if in.Drill {
		c, err := r.m.tf.dial(cmd.Context(), g.log)
		if err != nil {
			return nil, nil, err
		}
		run, err := temporalclient.StartWorkflow(cmd.Context(), c, client.StartWorkflowOptions{ID: payload.RestoreWorkflowID(in.RestoreSpec, addr),
			TaskQueue: payload.TaskQueue}, workflows.Restore, in)
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "Restore %s started (run %s)\n", run.GetID(), run.GetRunID())
		return c, run, nil
	}
	c, svc, err := newJobService(cmd, g, &r.m.tf)
	if err != nil {
		return nil, nil, err
	}
	run, err := startJob(cmd, c, svc, jobs.Request{Kind: jobs.Restore, Source: in.Source, Label: r.m.label,
		Target: jobs.RestoreLock(addr, in.IntoSchema, in.Schemas, in.Tables), Input: in})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, run, nil
}

// restoreDBProgress shows a Restore's progress: the tables verified, the
// rows loaded, the table loading now with its chunk size, the rate, the
// ETA, and a pause with its reason.
func restoreDBProgress(p payload.RestoreProgress) progress {
	counts := fmt.Sprintf("%d/%d tables, %d/%d rows", p.TablesDone, len(p.Tables), p.Rows, p.Total)
	if p.RowsPerSecond > 0 {
		counts += fmt.Sprintf(", %.0f rows/s", p.RowsPerSecond)
	}
	if p.ETASeconds >= 0 && p.Rows < p.Total {
		counts += ", ETA " + (time.Duration(p.ETASeconds) * time.Second).String()
	}
	phase := p.Phase
	var loading []string
	for _, t := range p.Tables {
		if t.State == payload.TableLoading || t.State == payload.TableVerifying {
			loading = append(loading, fmt.Sprintf("%s %s (chunk %d)", t.State, t.Target, t.ChunkRows))
		}
	}
	if len(loading) > 0 {
		phase = strings.Join(loading, ", ")
	}
	if p.Paused != "" {
		phase = "paused: " + p.Paused
	}
	var done, total int64 = p.Rows, p.Total
	bar := ""
	if total > 0 {
		bar = tablesBar(int(done*1000/total), 1000)
	}
	return progress{phase: phase, counts: counts, bar: bar}
}

// printStopped lists what a restore that ended without completing
// (cancelled, failed) loaded: for an ad-hoc target its checkpoints, read
// from the target with the CLI's own password file; for a named target
// (whose password only the workers have) the tables as the run last
// reported them. A rerun of the same command goes on from the checkpoints.
func printStopped(ctx context.Context, w io.Writer, c client.Client, run client.WorkflowRun, spec payload.RestoreSpec) {
	var p payload.RestoreProgress
	v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), payload.ProgressQuery)
	if err == nil {
		err = v.Get(&p)
	}
	where := spec.Target.String()
	if err == nil && p.RestoreID == "" {
		fmt.Fprintf(w, "the restore stopped before it loaded anything into %s\n", where)
		return
	}
	if err != nil {
		fmt.Fprintf(w, "what the restore loaded into %s cannot be listed: %v\n", where, err)
		return
	}
	schemaName := restore.CheckpointSchemaOr(spec.CheckpointSchema)
	fmt.Fprintf(w, "restore %s stopped; what it loaded stays in %s, with its checkpoints in %s.%s (the same command goes on from them):\n",
		p.RestoreID, where, schemaName, restore.BookkeepingTable)
	if spec.Target.AdHoc == nil {
		for _, t := range p.Tables {
			fmt.Fprintf(w, "  %-30s -> %-30s %10d of %d rows loaded when last reported (%s)\n", t.Table, t.Target, t.Rows, t.Total, t.State)
		}
		return
	}
	cps, err := restore.Checkpoints(ctx, target.Server(*spec.Target.AdHoc), schemaName, p.RestoreID)
	if err != nil {
		fmt.Fprintf(w, "  the checkpoints cannot be read: %v\n", err)
		return
	}
	if len(cps) == 0 {
		fmt.Fprintln(w, "  no table started")
	}
	for _, cp := range cps {
		fmt.Fprintf(w, "  %-30s -> %-30s %10d of %d rows loaded in %d chunks (%s)\n", cp.SourceTable,
			cp.Schema+"."+cp.LoadTable, cp.RowsLoaded, cp.RowsTotal, cp.Chunks, cp.State)
	}
}

// printRestoreDB reports a finished restore: where, the cut, every table.
func printRestoreDB(w io.Writer, spec payload.RestoreSpec, res workflows.RestoreResult) {
	verb := "restored"
	if spec.Drill {
		verb = "restore drill of"
	}
	fmt.Fprintf(w, "%s %s at %s into %s: %d tables, %d rows (%d written by this run), from snapshot %s\n",
		verb, spec.Source, spec.At, res.TargetAddr, len(res.Tables), res.Rows, res.Written, res.Base)
	fmt.Fprintf(w, "  cut: %s\n", res.Cut)
	for _, t := range res.Tables {
		line := fmt.Sprintf("  %-30s -> %-30s %10d rows  verified %s", t.Table, t.Target, t.Rows, t.Fingerprint)
		if t.Old != "" {
			line += "  (replaced table kept as " + t.Old + ")"
		}
		fmt.Fprintln(w, line)
	}
	if len(res.Dropped) > 0 {
		fmt.Fprintf(w, "  drill verdict: OK; scratch schemas dropped: %s\n", strings.Join(res.Dropped, ", "))
	}
}
