package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// restoreFlags are the flags of `dbtrail restore`.
type restoreFlags struct {
	m                   momentFlags
	at                  string
	target              dsnFlag
	replicas            []string
	replicaPasswordFile string
	spec                activities.RestoreSpec
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

It refuses a target table that exists and holds rows, unless --replace (load a
twin, verify it, swap it in with RENAME TABLE; the old table is kept as
_dbtrail_old_<name>) or --into-schema (restore beside it; {schema} stands for
the source table's schema). Loading pauses while a --replica-dsn lags more than
--max-lag or is not replicating, while --throttle-query returns a value above 0
or while Threads_running passes --max-load; the chunk size follows --chunk-time
and --max-rows-per-second caps the rate. Passwords come from the environment
(DBTRAIL_TARGET_DSN) or --target-password-file, never the command line; the
worker reads them from a file (see docs/restore.md). Ctrl-C stops waiting, not
the run; a cancelled run keeps what it loaded, and running the same restore
again goes on from the checkpoints (a finished one writes 0 rows).`,
		Example: "  DBTRAIL_TARGET_DSN='dba:secret@tcp(db1:3306)/' dbtrail restore --at '2026-11-29 10:41:59' --table shop.orders --into-schema shop_restored\n" +
			"  dbtrail restore --at 0-1-5123 --schema shop --target-dsn 'dba@tcp(db1:3306)/' --target-password-file pw --replace --replica-dsn 'dba@tcp(db2:3306)/' --replica-password-file pw",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRestore(cmd, g, r) },
	}
	f := cmd.Flags()
	r.m.register(f)
	r.target.register(f, "target server")
	f.StringArrayVar(&r.m.tables, "table", nil, "only this table, as schema.table (repeatable)")
	f.StringVar(&r.at, "at", "", "the moment T (time, seq:N, file:pos, GTID or latest)")
	f.StringArrayVar(&r.replicas, "replica-dsn", nil, "a replica of the target whose lag pauses the load (repeatable; no password here)")
	f.StringVar(&r.replicaPasswordFile, "replica-password-file", "", "file holding the replicas' password")
	f.StringVar(&r.spec.IntoSchema, "into-schema", "", "restore into this schema ({schema} stands for the source table's schema)")
	f.BoolVar(&r.spec.Replace, "replace", false, "load into a twin table and swap it with the existing one at the end")
	f.StringVar(&r.spec.CheckpointSchema, "checkpoint-schema", restore.DefaultCheckpointSchema, "schema of the bookkeeping table dbtrail_restore in the target")
	f.BoolVar(&r.spec.NoBinlog, "no-binlog", false, "load with sql_log_bin=0 (needs SUPER or BINLOG ADMIN; replicas then do not get the rows)")
	f.DurationVar(&r.spec.Limits.ChunkTime, "chunk-time", restore.DefaultChunkTime, "time one chunk's transaction aims at")
	f.DurationVar(&r.spec.Limits.MaxLag, "max-lag", restore.DefaultMaxLag, "pause while a --replica-dsn lags more")
	f.IntVar(&r.spec.Limits.MaxLoad, "max-load", restore.DefaultMaxLoad, "pause while the target's Threads_running is above this (0: no limit)")
	f.IntVar(&r.spec.Limits.MaxRowsPerSecond, "max-rows-per-second", 0, "cap on each table's load rate (0: none)")
	f.StringVar(&r.spec.ThrottleQuery, "throttle-query", "", "a query on the target; the load pauses while it returns a value above 0")
	f.DurationVar(&r.slice, "slice", activities.DefaultLoadSlice, "how long one LoadTable activity loads before it reports")
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
	if r.target.value == "" {
		return fmt.Errorf("--target-dsn (or %s) is required", envName("target-dsn"))
	}
	spec := r.spec
	spec.Source, spec.At = r.m.source, r.at
	var err error
	if spec.Schemas, spec.Tables, err = r.m.selection(); err != nil {
		return err
	}
	ep, addr, cleanup, err := endpointOf(r.target.value, "target-dsn", r.target.passwordFile, g.fromArgs)
	if err != nil {
		return err
	}
	spec.Target = ep
	cleanups := []func(){cleanup}
	for _, d := range r.replicas {
		rep, _, rc, err := endpointOf(d, "replica-dsn", r.replicaPasswordFile, g.fromArgs)
		if err != nil {
			return err
		}
		spec.Replicas = append(spec.Replicas, rep)
		cleanups = append(cleanups, rc)
	}
	ctx := cmd.Context()
	in := workflows.RestoreInput{RestoreSpec: spec, Parallel: r.m.parallel, Slice: r.slice}
	c, run, err := startRestore(cmd, g, r, in, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var res workflows.RestoreResult
	err = newWaiter(cmd.ErrOrStderr(), r.m.tf.location()).wait(ctx, "Restore", run, queryProgress(c, run, restoreDBProgress), &res)
	var failed *runFailedError
	if errors.As(err, &failed) && !spec.Drill {
		printStopped(ctx, cmd.OutOrStdout(), c, run, spec, addr)
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

// startRestore starts the Restore workflow: a restore as a job under the
// jobs rules (--label unique per source, one restore per source and one
// per target at a time); a drill under its own id, so that a scheduled
// drill never holds up a restore. A rerun of a restore under a new label
// goes on from the target's checkpoints (they are keyed by the restore's
// source, cut, mode and schema, not by the job).
func startRestore(cmd *cobra.Command, g *globals, r *restoreFlags, in workflows.RestoreInput, addr string) (client.Client, client.WorkflowRun, error) {
	if in.Drill {
		c, err := r.m.tf.dial(cmd.Context(), g.log)
		if err != nil {
			return nil, nil, err
		}
		run, err := temporalclient.StartWorkflow(cmd.Context(), c, client.StartWorkflowOptions{ID: workflows.RestoreWorkflowID(in.RestoreSpec, addr),
			TaskQueue: workflows.TaskQueue}, workflows.Restore, in)
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
		Target: restoreTarget(addr, in.RestoreSpec), Input: in})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, run, nil
}

// restoreTarget names where a restore writes, for "one restore per target
// at a time": the target server and the schema restored into (its
// --into-schema, else the schemas selected, else every schema: "*").
//
// It is spelt as a job name (jobs.CheckName): other characters become '-',
// and a name longer than 64 keeps its start and a digest of the whole.
func restoreTarget(addr string, sp activities.RestoreSpec) string {
	schema := "all"
	switch {
	case sp.IntoSchema != "":
		schema = sp.IntoSchema
	case len(sp.Schemas) > 0 && len(sp.Tables) == 0:
		schema = strings.Join(sp.Schemas, ".")
	}
	name := strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, addr+"."+schema)
	if len(name) > 64 {
		sum := sha256.Sum256([]byte(name))
		name = name[:47] + "-" + hex.EncodeToString(sum[:8])
	}
	return name
}

// restoreDBProgress shows a Restore's progress: the tables verified, the
// rows loaded, the table loading now with its chunk size, the rate, the
// ETA, and a pause with its reason.
func restoreDBProgress(p workflows.RestoreProgress) progress {
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
		if t.State == workflows.TableLoading || t.State == workflows.TableVerifying {
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
// (cancelled, failed) loaded: its checkpoints in the target, which a rerun
// of the same command goes on from. It says so when it cannot read them.
func printStopped(ctx context.Context, w io.Writer, c client.Client, run client.WorkflowRun, spec activities.RestoreSpec, addr string) {
	var p workflows.RestoreProgress
	v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.ProgressQuery)
	if err == nil {
		err = v.Get(&p)
	}
	if err == nil && p.RestoreID == "" {
		fmt.Fprintf(w, "the restore stopped before it loaded anything into %s\n", addr)
		return
	}
	var cps []restore.Checkpoint
	if err == nil {
		cps, err = activities.RestoreCheckpoints(ctx, spec, p.RestoreID)
	}
	if err != nil {
		fmt.Fprintf(w, "what the restore loaded into %s cannot be listed: %v\n", addr, err)
		return
	}
	schemaName := spec.CheckpointSchema
	if schemaName == "" {
		schemaName = restore.DefaultCheckpointSchema
	}
	fmt.Fprintf(w, "restore %s stopped; what it loaded stays in %s, with its checkpoints in %s.%s (the same command goes on from them):\n",
		p.RestoreID, addr, schemaName, restore.BookkeepingTable)
	if len(cps) == 0 {
		fmt.Fprintln(w, "  no table started")
	}
	for _, cp := range cps {
		fmt.Fprintf(w, "  %-30s -> %-30s %10d of %d rows loaded in %d chunks (%s)\n", cp.SourceTable,
			cp.Schema+"."+cp.LoadTable, cp.RowsLoaded, cp.RowsTotal, cp.Chunks, cp.State)
	}
}

// printRestoreDB reports a finished restore: where, the cut, every table.
func printRestoreDB(w io.Writer, spec activities.RestoreSpec, res workflows.RestoreResult) {
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
