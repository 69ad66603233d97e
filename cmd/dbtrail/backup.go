package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workflows"
)

func newBackupCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "backup", Short: "Start backups (as Temporal workflows) and wait for them"}
	cmd.AddCommand(newBackupFullCmd(g))
	return cmd
}

func newBackupFullCmd(g *globals) *cobra.Command {
	var tf temporalFlags
	var source string
	var parallel int
	var label string
	var tables []string
	cmd := &cobra.Command{
		Use:   "full",
		Short: "Take a full backup: mydumper → Parquet snapshot, published as current",
		Long: `full starts the FullBackup workflow of a source as a job labelled --label
(unique per source; one backup per source at a time: a second start while
one runs is refused with the running job's id) and waits for it, showing progress:
a bar on a terminal, else (a log, a pipe) a line per phase and every 10 s at
most. A failed backup's root cause is the error. Ctrl-C stops waiting, not the
backup: the CLI prints where to follow or cancel it (the Temporal UI, the
temporal CLI).

With --tables it is a partial full backup: mydumper dumps only those tables
(schema.table, comma-separated), at its own consistent position, and their
snapshot is kept as a partial snapshot (<source>/.partial/<id>): never
current, never uploaded, not listed with the snapshots; a refresh folds it
forward, and retention removes it after 24 hours. dbtrail status shows the
last one.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, svc, err := newJobService(cmd, g, &tf)
			if err != nil {
				return err
			}
			defer c.Close()
			run, err := startJob(cmd, c, svc, jobs.Request{Kind: jobs.Backup, Source: source, Label: label,
				Input: payload.FullBackupInput{Source: source, Parallel: parallel, Tables: tables}})
			if err != nil {
				return err
			}
			out := cmd.ErrOrStderr()
			var res workflows.FullBackupResult
			if err := newWaiter(out, tf.location()).wait(ctx, "FullBackup", run, queryProgress(c, run, fullBackupProgress), &res); err != nil {
				return err
			}
			if res.Partial != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "partial snapshot %s finished (not published): %d tables (%s), %d rows read from the source, position %s:%d seq %d, took %s\n",
					res.SnapshotID, res.Tables, strings.Join(res.Partial.Tables, ", "), res.Rows, res.Position.File, res.Position.Pos, res.Position.Seq,
					res.Partial.Took.Round(time.Millisecond))
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "snapshot %s published: %d tables, %d rows, position %s:%d seq %d\n",
					res.SnapshotID, res.Tables, res.Rows, res.Position.File, res.Position.Pos, res.Position.Seq)
			}
			for _, s := range res.Skipped {
				fmt.Fprintf(cmd.OutOrStdout(), "  skipped %s\n", s)
			}
			for _, s := range res.FloatsAsDumped {
				fmt.Fprintf(cmd.OutOrStdout(), "  FLOAT values as dumped: %s\n", s)
			}
			printUpload(cmd.OutOrStdout(), res.Upload)
			return nil
		},
	}
	f := cmd.Flags()
	tf.register(f)
	f.StringVar(&source, "source", "main", "source to back up")
	f.IntVar(&parallel, "parallel", 2, "tables converted at once")
	f.StringSliceVar(&tables, "tables", nil, "a partial full backup of these tables only (schema.table, comma-separated)")
	f.StringVar(&label, "label", "", "the job's label, unique per source (default backup-<UTC time>); the job id is <source>:<label>")
	return cmd
}

// fullBackupProgress shows a FullBackup's progress: a bar of its tables.
func fullBackupProgress(p payload.FullBackupProgress) progress {
	return progress{phase: p.Phase, counts: fmt.Sprintf("%d/%d tables, %d rows", p.TablesDone, p.TablesTotal, p.Rows),
		bar: tablesBar(p.TablesDone, p.TablesTotal)}
}
