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
	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/temporal"
	"github.com/dbtrail/dbtrail/workflows"
)

func newBackupCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "backup", Short: "Start backups (as Temporal workflows) and wait for them"}
	cmd.AddCommand(newBackupFullCmd(g))
	return cmd
}

func newBackupFullCmd(g *globals) *cobra.Command {
	var addr, namespace, source string
	var parallel int
	cmd := &cobra.Command{
		Use:   "full",
		Short: "Take a full backup: mydumper → Parquet snapshot, published as current",
		Long: `full starts the FullBackup workflow of a source (one at a time per source:
a second start while one runs is refused) and waits for it, showing progress.
Ctrl-C stops waiting, not the backup: follow or cancel it in the Temporal UI.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := temporal.Dial(ctx, addr, namespace, g.log)
			if err != nil {
				return err
			}
			defer c.Close()
			run, err := temporal.StartWorkflow(ctx, c, client.StartWorkflowOptions{
				ID: workflows.FullBackupWorkflowID(source), TaskQueue: workflows.TaskQueue,
			}, workflows.FullBackup, workflows.FullBackupInput{Source: source, Parallel: parallel})
			if err != nil {
				return err
			}
			out := cmd.ErrOrStderr()
			fmt.Fprintf(out, "FullBackup %s started (run %s)\n", run.GetID(), run.GetRunID())
			var res workflows.FullBackupResult
			if err := waitWithProgress(ctx, c, run, out, &res); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "snapshot %s published: %d tables, %d rows, position %s:%d seq %d\n",
				res.SnapshotID, res.Tables, res.Rows, res.Position.File, res.Position.Pos, res.Position.Seq)
			for _, s := range res.Skipped {
				fmt.Fprintf(cmd.OutOrStdout(), "  skipped %s\n", s)
			}
			for _, s := range res.FloatsAsDumped {
				fmt.Fprintf(cmd.OutOrStdout(), "  FLOAT values as dumped: %s\n", s)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "temporal-addr", temporal.DefaultFrontendAddr, "Temporal frontend host:port")
	f.StringVar(&namespace, "namespace", temporal.DefaultNamespace, "Temporal namespace")
	f.StringVar(&source, "source", "main", "source to back up")
	f.IntVar(&parallel, "parallel", 2, "tables converted at once")
	return cmd
}

// waitWithProgress waits for run, drawing its "progress" query as a bar on
// out once a second.
func waitWithProgress(ctx context.Context, c client.Client, run client.WorkflowRun, out io.Writer, result any) error {
	return waitRendering(ctx, c, run, out, result, func(v converter.EncodedValue) (string, error) {
		var p workflows.FullBackupProgress
		if err := v.Get(&p); err != nil {
			return "", err
		}
		return progressLine(p), nil
	})
}

// waitRendering waits for run, drawing the line render makes of its
// "progress" query on out once a second.
func waitRendering(ctx context.Context, c client.Client, run client.WorkflowRun, out io.Writer, result any,
	render func(converter.EncodedValue) (string, error)) error {
	done := make(chan error, 1)
	go func() { done <- run.Get(ctx, result) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			fmt.Fprintln(out)
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return fmt.Errorf("stopped waiting; %s keeps running (see the Temporal UI)", run.GetID())
			}
			return err
		case <-tick.C:
			v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.ProgressQuery)
			if err != nil {
				continue
			}
			if line, err := render(v); err == nil {
				fmt.Fprintf(out, "\r%s", line)
			}
		}
	}
}

func progressLine(p workflows.FullBackupProgress) string {
	const width = 30
	filled := 0
	if p.TablesTotal > 0 {
		filled = width * p.TablesDone / p.TablesTotal
	}
	return fmt.Sprintf("[%s%s] %d/%d tables, %d rows — %-45s", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		p.TablesDone, p.TablesTotal, p.Rows, p.Phase)
}
