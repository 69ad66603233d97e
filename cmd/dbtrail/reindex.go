package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

func newReindexCmd(g *globals) *cobra.Command {
	var tf temporalFlags
	var source, url string
	cmd := &cobra.Command{
		Use: "reindex",
		// Its name before issue 35 called the rebuild "reindex".
		Aliases: []string{"restore-index"},
		Short:   "Rebuild an empty index of a source from its archives, and wait",
		Long: `reindex starts the Reindex workflow of a source and waits for it,
showing progress. It fills an empty index (it refuses one that holds anything of
the source) from the archive location: the history file (schema history, capture
gaps and starts), then every hour's archive file, one after the other. Stop
capture of the source first: the restore refuses to start while it runs, and a
capture started before the restore has finished is refused, naming it. A killed
worker's run, or a new run, goes on at the next hour. At the end the capture checkpoint is set after the last restored
transaction: capture resumes there without a gap if the source still has that
binlog, otherwise a capture gap is recorded. An archive file that cannot be read
is named, the others are restored, and the command exits non-zero.
The worker opens the location with its own credentials; this command checks it
first with the ones of its environment, so a missing bucket or wrong keys fail
here, before anything is written.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if url == "" {
				return fmt.Errorf("--archive-url (or %s) is required: where the archives are", envName("archive-url"))
			}
			if err := checkArchiveLocation(ctx, url, source, g); err != nil {
				return err
			}
			c, err := tf.dial(ctx, g.log)
			if err != nil {
				return err
			}
			defer c.Close()
			run, err := temporalclient.StartWorkflow(ctx, c, client.StartWorkflowOptions{
				ID: payload.ReindexWorkflowID(source), TaskQueue: payload.TaskQueue,
			}, workflows.Reindex, payload.ReindexInput{Source: source, ArchiveURL: url})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Reindex %s started (run %s)\n", run.GetID(), run.GetRunID())
			var res workflows.ReindexResult
			err = newWaiter(cmd.ErrOrStderr(), tf.location()).wait(ctx, "Reindex", run, queryProgress(c, run, restoreProgress), &res)
			var app *temporal.ApplicationError
			if errors.As(err, &app) && app.HasDetails() && app.Details(&res) == nil {
				printRestore(cmd.OutOrStdout(), res)
				return err
			}
			if err != nil {
				return err
			}
			printRestore(cmd.OutOrStdout(), res)
			return nil
		},
	}
	f := cmd.Flags()
	tf.register(f)
	f.StringVar(&source, "source", "main", "source to restore")
	f.StringVar(&url, "archive-url", "", "archive location: a folder or s3://bucket/prefix?... (docs/storage.md)")
	return cmd
}

// checkArchiveLocation opens the location (a missing bucket, wrong keys or
// an unreachable endpoint fail here, naming bucket and endpoint) and checks
// that it holds the source's history file.
func checkArchiveLocation(ctx context.Context, url, source string, g *globals) error {
	st, err := storage.Open(ctx, url, storage.Options{Logger: g.log})
	if err != nil {
		return fmt.Errorf("archive location: %w", err)
	}
	if _, err := st.Stat(ctx, archive.HistoryName(source)); err != nil {
		return fmt.Errorf("archive location %s holds no archive of source %s (%s: %w)", st.Location(), source, archive.HistoryName(source), err)
	}
	return nil
}

// restoreProgress shows a Reindex's progress: a bar of its hours.
func restoreProgress(p payload.ReindexProgress) progress {
	return progress{phase: p.Phase, counts: fmt.Sprintf("%d/%d hours, %d events", p.HoursDone, p.HoursTotal, p.Events),
		bar: tablesBar(p.HoursDone, p.HoursTotal)}
}

// printRestore reports a restore's result.
func printRestore(w io.Writer, res workflows.ReindexResult) {
	fmt.Fprintf(w, "restored %d hours, %d events, seq %d..%d from %s\n", res.Hours, res.Events, res.FirstSeq, res.LastSeq, res.Location)
	if res.Outcome != "" {
		fmt.Fprintf(w, "  %s\n", res.Outcome)
	}
	for _, gp := range res.Gaps {
		fmt.Fprintf(w, "  GAP %s\n", gp)
	}
	for _, f := range res.Failed {
		fmt.Fprintf(w, "  NOT RESTORED %s\n", f)
	}
}
