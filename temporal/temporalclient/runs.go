package temporalclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
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

// readerTypes are the workflow types that read a source's snapshots or
// archives older than its current snapshot (an export or verify at a
// moment, a restore, a drill, an index rebuilt from archives (Reindex, RestoreIndex before
// issue 35), a compaction
// of a published snapshot). Refresh, FullBackup, Archive and Retention read
// only the current snapshot, newer ones and the hours after it, which
// retention never removes.
var readerTypes = []string{"Export", "Restore", "Verify", "RestoreDrill", "Reindex", "RestoreIndex", "Compact"}

// sourceAttr is the search attribute naming a job's source (jobs.AttrSource).
const sourceAttr = "DbtrailSource"

// Readers returns "<type> <workflow id>" of every open run of a reader
// type whose source is source, or whose source is not recorded (started
// without the search attribute: it may read any source), except a
// compaction, whose id names its source (payload.CompactWorkflowID).
func (r Runs) Readers(ctx context.Context, source string) ([]string, error) {
	q := "ExecutionStatus = 'Running' AND WorkflowType IN ('" + strings.Join(readerTypes, "', '") + "')"
	var out []string
	var token []byte
	for {
		resp, err := r.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list running jobs: %w", err)
		}
		for _, info := range resp.GetExecutions() {
			typ, id := info.GetType().GetName(), info.GetExecution().GetWorkflowId()
			var src string
			if p, ok := info.GetSearchAttributes().GetIndexedFields()[sourceAttr]; ok {
				if err := converter.GetDefaultDataConverter().FromPayload(p, &src); err != nil {
					return nil, fmt.Errorf("source of job %s: %w", id, err)
				}
			}
			switch {
			case src == source,
				src == "" && typ != "Compact",
				src == "" && id == "compact-"+source:
				out = append(out, typ+" "+id)
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}
