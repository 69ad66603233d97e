package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
)

// newJobService dials Temporal as tf says and returns the jobs service on
// it; the caller closes the client.
func newJobService(cmd *cobra.Command, g *globals, tf *temporalFlags) (client.Client, *jobs.Service, error) {
	c, err := tf.dial(cmd.Context(), g.log)
	if err != nil {
		return nil, nil, err
	}
	return c, jobs.New(jobs.Config{Client: c, Namespace: tf.namespace, TaskQueue: payload.TaskQueue, UI: tf.location().ui, Origin: jobs.StartedByCLI}), nil
}

// startJob starts req under the jobs rules (label unique per source, one
// job per source and kind), prints its id and returns its run to wait for.
func startJob(cmd *cobra.Command, c client.Client, svc *jobs.Service, req jobs.Request) (client.WorkflowRun, error) {
	j, err := svc.Start(cmd.Context(), req)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s job %s started (label %s, run %s)\n", j.Workflow, j.ID, j.Label, j.RunID)
	return c.GetWorkflow(cmd.Context(), j.ID, j.RunID), nil
}

// newJobsCmd is `dbtrail jobs`: list, show, follow and cancel jobs.
func newJobsCmd(g *globals) *cobra.Command {
	var tf temporalFlags
	var f jobs.Filter
	var kind, state string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List dbtrail's jobs (Temporal workflows), newest first; show, follow or cancel one",
		Long: `jobs lists the jobs of every source, newest first: backups, refreshes,
exports, verifies, restores, retention and the scheduled ones. A job is a
Temporal workflow; its id (<source>:<label> for the jobs started with a label)
is the workflow id. Filter with --kind, --state, --label and --source.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if kind != "" {
				if f.Kind, err = jobs.ParseKind(kind); err != nil {
					return fmt.Errorf("--kind: %w", err)
				}
			}
			if state != "" {
				if f.State, err = jobs.ParseState(state); err != nil {
					return fmt.Errorf("--state: %w", err)
				}
			}
			c, svc, err := newJobService(cmd, g, &tf)
			if err != nil {
				return err
			}
			defer c.Close()
			list, _, err := svc.List(cmd.Context(), f, limit, nil)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJobsJSON(cmd.OutOrStdout(), list)
			}
			return writeJobs(cmd.OutOrStdout(), list)
		},
	}
	fl := cmd.Flags()
	tf.register(fl)
	fl.StringVar(&kind, "kind", "", "only jobs of this kind: backup, refresh, export, verify, restore, retention, archive, compact, reindex")
	fl.StringVar(&state, "state", "", "only jobs in this state: running, completed, failed, canceled, terminated, timed_out")
	fl.StringVar(&f.Label, "label", "", "only the job with this label")
	fl.StringVar(&f.Source, "source", "", "only jobs of this source")
	fl.IntVar(&limit, "limit", 50, "most jobs listed (1 to 200)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(newJobShowCmd(g, false), newJobShowCmd(g, true), newJobCancelCmd(g))
	return cmd
}

// newJobShowCmd is `dbtrail jobs show ID` or, with follow, `dbtrail jobs
// follow ID`: the job's state, progress, result or error, and with follow
// its progress until it ends (exit 1 when it did not complete).
func newJobShowCmd(g *globals, follow bool) *cobra.Command {
	var tf temporalFlags
	use, short := "show ID", "Show a job: state, progress, result or error"
	if follow {
		use, short = "follow ID", "Follow a job until it ends, printing its progress; exit 1 when it did not complete"
	}
	cmd := &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, svc, err := newJobService(cmd, g, &tf)
			if err != nil {
				return err
			}
			defer c.Close()
			j, err := svc.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			last := ""
			for follow && j.State == jobs.Running {
				if p := string(j.Progress); p != "" && p != last {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s  %s\n", time.Now().Format("15:04:05"), p)
					last = p
				}
				select {
				case <-cmd.Context().Done():
					return fmt.Errorf("stopped following %s; the job goes on", j.ID)
				case <-time.After(2 * time.Second):
				}
				if j, err = svc.Get(cmd.Context(), args[0]); err != nil {
					return err
				}
			}
			if err := writeJobsJSON(cmd.OutOrStdout(), j); err != nil {
				return err
			}
			if follow && j.State != jobs.Completed {
				return fmt.Errorf("job %s %s", j.ID, j.Error)
			}
			return nil
		},
	}
	tf.register(cmd.Flags())
	return cmd
}

// newJobCancelCmd is `dbtrail jobs cancel ID`.
func newJobCancelCmd(g *globals) *cobra.Command {
	var tf temporalFlags
	cmd := &cobra.Command{
		Use: "cancel ID", Short: "Ask a running job to cancel (it cleans up and ends as canceled)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, svc, err := newJobService(cmd, g, &tf)
			if err != nil {
				return err
			}
			defer c.Close()
			j, err := svc.Cancel(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cancel requested for %s job %s (run %s)\n", j.Workflow, j.ID, j.RunID)
			return nil
		},
	}
	tf.register(cmd.Flags())
	return cmd
}

// writeJobs prints one line per job.
func writeJobs(w io.Writer, list []jobs.Job) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no job")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSOURCE\tLABEL\tSTATE\tSTARTED\tCLOSED")
	for _, j := range list {
		closed := "-"
		if j.ClosedAt != nil {
			closed = j.ClosedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, orDash(string(j.Kind)), orDash(j.Source), orDash(j.Label), j.State,
			j.StartedAt.Format(time.RFC3339), closed)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeJobsJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
