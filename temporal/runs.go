package temporal

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// Runs answers whether a workflow run still runs, from the Temporal
// server (activities.RunChecker): a run the server no longer knows (its
// retention passed) does not.
type Runs struct{ Client client.Client }

// Running reports whether run runID of workflow id is open.
func (r Runs) Running(ctx context.Context, id, runID string) (bool, error) {
	d, err := r.Client.DescribeWorkflowExecution(ctx, id, runID)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("describe run %s of %s: %w", runID, id, err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}
