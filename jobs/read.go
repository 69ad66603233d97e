package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/payload"
)

// ProgressTimeout bounds how long Get waits for a running job's progress
// query (no worker polling: no progress).
const ProgressTimeout = 3 * time.Second

// Filter selects jobs; an empty field selects every value.
type Filter struct {
	Kind   Kind
	State  State
	Label  string
	Source string
}

// What a job is, in one place: a workflow whose type is a job kind's and
// that carries the source search attribute (AttrSource), as every start
// through Start and every schedule sets it. Any other workflow of the
// namespace is not a job, whatever its id or type: another application's, a
// drill's Restore, `dbtrail reindex`'s run, the children a refresh
// starts (its full backup in place of a refused refresh, its compaction:
// parts of that refresh job). Get and Cancel answer ErrNotFound for it,
// List and Last leave it out. isJob is the rule on a description, jobQuery
// the same rule as a visibility query.

// isJob reports whether info describes a job.
func isJob(info *workflowpb.WorkflowExecutionInfo) bool {
	return KindOf(info.GetType().GetName()) != "" && keyword(info.GetSearchAttributes().GetIndexedFields(), AttrSource) != ""
}

// jobQuery is the visibility query of the jobs of kind ("": every kind).
func jobQuery(kind Kind) string {
	types := []Kind{kind}
	if kind == "" {
		types = Kinds()
	}
	return typeIn(types...) + " AND " + AttrSource + " IS NOT NULL"
}

// typeIn is the visibility condition on the workflow types of kinds'
// jobs (Kind.Workflows: a kind's old workflow type too).
func typeIn(kinds ...Kind) string {
	var names []string
	for _, k := range kinds {
		for _, w := range k.Workflows() {
			names = append(names, quote(w))
		}
	}
	return "WorkflowType IN (" + strings.Join(names, ", ") + ")"
}

// readerAttrs registers the search attributes before a listing, whose
// query names them (a fresh namespace refuses it otherwise). A process that
// may not register them (no operator permission on a cluster) still
// lists where they are registered: the error only joins the listing's own.
func (s *Service) readerAttrs(ctx context.Context) error {
	if err := s.ensureAttrs(ctx); err != nil {
		return fmt.Errorf("(while registering the jobs' search attributes: %w)", err)
	}
	return nil
}

// query is the visibility query of f: jobs only (jobQuery).
func (f Filter) query() (string, error) {
	if f.Kind != "" && f.Kind.Workflow() == "" {
		return "", fmt.Errorf("unknown kind %q", f.Kind)
	}
	parts := []string{jobQuery(f.Kind)}
	if f.State != "" {
		st := f.State.visibilityStatus()
		if st == "" {
			return "", fmt.Errorf("unknown state %q", f.State)
		}
		parts = append(parts, "ExecutionStatus = "+quote(st))
	}
	for _, c := range []struct{ attr, what, v string }{{AttrLabel, "label", f.Label}, {AttrSource, "source", f.Source}} {
		if c.v == "" {
			continue
		}
		if err := CheckName(c.what, c.v); err != nil {
			return "", err
		}
		parts = append(parts, c.attr+" = "+quote(c.v))
	}
	return strings.Join(parts, " AND "), nil
}

// MaxPageSize bounds List's page size.
const MaxPageSize = 200

// List returns one page of the jobs f selects, newest first, and the token
// of the next page (nil at the end). pageSize is 1 to MaxPageSize.
func (s *Service) List(ctx context.Context, f Filter, pageSize int, token []byte) ([]Job, []byte, error) {
	if pageSize < 1 || pageSize > MaxPageSize {
		return nil, nil, fmt.Errorf("page size %d: want 1 to %d", pageSize, MaxPageSize)
	}
	q, err := f.query()
	if err != nil {
		return nil, nil, err
	}
	attrsErr := s.readerAttrs(ctx)
	resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: s.namespace, PageSize: int32(pageSize), NextPageToken: token, Query: q})
	if err != nil {
		var bad *serviceerror.InvalidArgument
		if errors.As(err, &bad) && len(token) > 0 {
			return nil, nil, fmt.Errorf("page token: %w", ErrBadToken)
		}
		return nil, nil, fmt.Errorf("list jobs: %w", errors.Join(err, attrsErr))
	}
	out := make([]Job, 0, len(resp.GetExecutions()))
	for _, ex := range resp.GetExecutions() {
		out = append(out, s.fromInfo(ex))
	}
	return out, resp.GetNextPageToken(), nil
}

// ErrBadToken is matched by List's error for a page token Temporal refused.
var ErrBadToken = errors.New("not a page token of this listing")

// Get returns the job id with its progress (running), result (completed)
// or error (any other end). A workflow id that Temporal does not know or
// that is not a job (isJob) is ErrNotFound, with the same message.
func (s *Service) Get(ctx context.Context, id string) (Job, error) {
	d, err := s.c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) || (err == nil && !isJob(d.GetWorkflowExecutionInfo())) {
		return Job{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Job{}, fmt.Errorf("describe job %s: %w", id, err)
	}
	j := s.fromInfo(d.GetWorkflowExecutionInfo())
	if j.State == Running {
		j.Progress = s.progress(ctx, j)
		j.Retrying = Retries(d)
		return j, nil
	}
	var res json.RawMessage
	err = s.c.GetWorkflow(ctx, j.ID, j.RunID).Get(ctx, &res)
	switch {
	case err == nil && j.State == Completed:
		j.Result = res
	case err != nil:
		j.Error = Outcome(err)
	}
	return j, nil
}

// progress asks the running job's workflow for its progress; nil when no
// worker answers within ProgressTimeout or the workflow has no such query.
func (s *Service) progress(ctx context.Context, j Job) json.RawMessage {
	qctx, cancel := context.WithTimeout(ctx, ProgressTimeout)
	defer cancel()
	v, err := s.c.QueryWorkflow(qctx, j.ID, j.RunID, payload.ProgressQuery)
	if err != nil {
		return nil
	}
	var raw json.RawMessage
	if err := v.Get(&raw); err != nil {
		return nil
	}
	return raw
}

// Cancel asks the running job id to cancel (its workflow cleans up and
// ends as canceled). A job not running is ErrClosed, an unknown one or a
// workflow that is no job ErrNotFound (nothing is cancelled).
func (s *Service) Cancel(ctx context.Context, id string) (Job, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if j.State != Running {
		return j, fmt.Errorf("job %s is %s: %w", id, j.State, ErrClosed)
	}
	if err := s.c.CancelWorkflow(ctx, j.ID, j.RunID); err != nil {
		return j, fmt.Errorf("cancel job %s: %w", id, err)
	}
	return j, nil
}

// Last returns the newest closed job of kind and source with its result or
// error; ok is false when there is none.
func (s *Service) Last(ctx context.Context, kind Kind, source string) (j Job, ok bool, err error) {
	q, err := Filter{Kind: kind, Source: source}.query()
	if err != nil {
		return Job{}, false, err
	}
	attrsErr := s.readerAttrs(ctx)
	resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: s.namespace, PageSize: 1, Query: q + " AND ExecutionStatus != 'Running'"})
	if err != nil {
		return Job{}, false, fmt.Errorf("last %s of %s: %w", kind, source, errors.Join(err, attrsErr))
	}
	if len(resp.GetExecutions()) == 0 {
		return Job{}, false, nil
	}
	j, err = s.Get(ctx, resp.GetExecutions()[0].GetExecution().GetWorkflowId())
	return j, err == nil, err
}

// fromInfo is the Job of a workflow execution's description.
func (s *Service) fromInfo(info *workflowpb.WorkflowExecutionInfo) Job {
	j := Job{
		ID: info.GetExecution().GetWorkflowId(), RunID: info.GetExecution().GetRunId(),
		Workflow: info.GetType().GetName(), State: stateOf(info.GetStatus()),
		StartedAt: info.GetStartTime().AsTime().UTC(),
	}
	j.Kind = KindOf(j.Workflow)
	if ct := info.GetCloseTime(); ct != nil && info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t := ct.AsTime().UTC()
		j.ClosedAt = &t
	}
	fields := info.GetSearchAttributes().GetIndexedFields()
	j.Source, j.Label, j.Target = keyword(fields, AttrSource), keyword(fields, AttrLabel), keyword(fields, AttrTarget)
	j.URL = s.runURL(j.ID, j.RunID)
	j.StartedBy = startedBy(info)
	return j
}

// keyword decodes the Keyword search attribute name ("" when absent).
func keyword(fields map[string]*commonpb.Payload, name string) string {
	p, ok := fields[name]
	if !ok {
		return ""
	}
	var v string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
		return ""
	}
	return v
}

func stateOf(st enumspb.WorkflowExecutionStatus) State {
	switch st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return Running
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return Completed
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return Failed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return Canceled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return Terminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return TimedOut
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return ContinuedAsNew
	}
	return State(strings.ToLower(st.String()))
}
