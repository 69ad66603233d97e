package jobs

import (
	"context"
	"fmt"

	workflowpb "go.temporal.io/api/workflow/v1"
)

// Who starts a job (Job.StartedBy): a schedule, the HTTP API or the CLI
// (Config.Origin, kept in the run's memo).
const (
	StartedBySchedule = "schedule"
	StartedByAPI      = "api"
	StartedByCLI      = "cli"
)

// memoStartedBy is the memo field that records Config.Origin.
const memoStartedBy = "started_by"

// scheduledBy is the search attribute Temporal sets on a run a schedule
// started.
const scheduledBy = "TemporalScheduledById"

// follow returns the running job id as a Job to follow (Followed, with who
// started it).
func (s *Service) follow(ctx context.Context, id string) (Job, error) {
	d, err := s.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return Job{}, fmt.Errorf("describe job %s: %w", id, err)
	}
	j := s.fromInfo(d.GetWorkflowExecutionInfo())
	j.Followed = true
	return j, nil
}

// startedBy says who started a run: StartedBySchedule for a run a schedule
// started, else the origin its memo records ("" for a run started by
// another client).
func startedBy(info *workflowpb.WorkflowExecutionInfo) string {
	if _, ok := info.GetSearchAttributes().GetIndexedFields()[scheduledBy]; ok {
		return StartedBySchedule
	}
	return keyword(info.GetMemo().GetFields(), memoStartedBy)
}

// After waits for the job after to end (whatever its outcome), then starts
// req: `--new` of a refresh asked for while one runs (a second refresh
// queued after it). A req that finds another job running then follows it
// when req.Follow is set.
func (s *Service) After(ctx context.Context, after Job, req Request) (Job, error) {
	if err := s.c.GetWorkflow(ctx, after.ID, after.RunID).Get(ctx, nil); err != nil && ctx.Err() != nil {
		return Job{}, fmt.Errorf("wait for job %s: %w", after.ID, ctx.Err())
	}
	return s.Start(ctx, req)
}
