package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Service starts and reads jobs through a Temporal client. It is safe for
// concurrent use; its starts are serialized, so two starts through one
// Service never both pass the one-at-a-time check.
type Service struct {
	c         client.Client
	namespace string
	taskQueue string
	ui        string
	now       func() time.Time
	origin    string

	mu sync.Mutex
	// recent is the last job this Service started per source and kind
	// (and per restore target): the visibility API lists a run a moment
	// after its start, Describe knows it at once.
	recent map[string]string

	attrsMu  sync.Mutex
	attrsSet bool
}

// Config configures a Service.
type Config struct {
	Client    client.Client
	Namespace string // default "default"
	TaskQueue string // where jobs run (payload.TaskQueue)
	// UI is the Temporal web UI's base URL, for Job.URL ("" : no links).
	UI string
	// Now is the clock of default labels (default time.Now).
	Now func() time.Time
	// Origin is who starts jobs through the Service (StartedByAPI,
	// StartedByCLI): each run's memo keeps it (Job.StartedBy).
	Origin string
}

// New returns the Service of cfg.
func New(cfg Config) *Service {
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{c: cfg.Client, namespace: cfg.Namespace, taskQueue: cfg.TaskQueue,
		ui: strings.TrimRight(cfg.UI, "/"), now: cfg.Now, origin: cfg.Origin, recent: map[string]string{}}
}

// Request is a job to start.
type Request struct {
	Kind   Kind
	Source string
	// Label names the job; "" makes one from the kind and the time.
	Label string
	// Target is a restore's target schema (restores into one target run one
	// at a time); required for a restore, empty otherwise.
	Target string
	// Input is the workflow's argument.
	Input any
	// Follow, when a job of the same source and kind runs, returns that
	// job (Job.Followed) instead of refusing the start: a refresh asked
	// for while one runs follows it.
	Follow bool
}

// Start checks req (names, one job per source and kind, the restore
// target) and starts its workflow under ID(source, label). A refusal is a
// *ConflictError naming the existing job; with req.Follow, a job of the
// same source and kind that runs is returned instead (Job.Followed).
func (s *Service) Start(ctx context.Context, req Request) (Job, error) {
	if err := s.check(&req); err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ensureAttrs(ctx); err != nil {
		return Job{}, err
	}
	for i, key := range s.lockKeys(req) {
		running, err := s.runningFor(ctx, key, req)
		if err != nil {
			return Job{}, err
		}
		if running != "" && req.Follow && i == 0 {
			return s.follow(ctx, running)
		}
		if running != "" {
			return Job{}, &ConflictError{Reason: ConflictRunning, JobID: running,
				Message: fmt.Sprintf("%s is running (job %s): one at a time; wait for it or cancel it", key.what, running)}
		}
	}
	id := ID(req.Source, req.Label)
	attrs := []temporal.SearchAttributeUpdate{KeySource.ValueSet(req.Source), KeyLabel.ValueSet(req.Label)}
	if req.Target != "" {
		attrs = append(attrs, KeyTarget.ValueSet(req.Target))
	}
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: s.taskQueue,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes:                    temporal.NewSearchAttributes(attrs...),
		Memo:                                     s.memo(),
	}, req.Kind.Workflow(), req.Input)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return Job{}, &ConflictError{Reason: ConflictLabel, JobID: id,
			Message: fmt.Sprintf("label %q of source %s is taken by job %s: labels are unique per source", req.Label, req.Source, id)}
	}
	if err != nil {
		return Job{}, fmt.Errorf("start job %s: %w", id, err)
	}
	for _, key := range s.lockKeys(req) {
		s.recent[key.id] = id
	}
	return Job{ID: id, RunID: run.GetRunID(), Kind: req.Kind, Workflow: req.Kind.Workflow(), Source: req.Source,
		Label: req.Label, Target: req.Target, State: Running, URL: s.runURL(id, run.GetRunID()), StartedAt: s.now().UTC(),
		StartedBy: s.origin}, nil
}

// memo is a run's memo: who started it (Config.Origin), when known.
func (s *Service) memo() map[string]any {
	if s.origin == "" {
		return nil
	}
	return map[string]any{memoStartedBy: s.origin}
}

// check validates req and fills its default label.
func (s *Service) check(req *Request) error {
	if req.Kind.Workflow() == "" {
		return fmt.Errorf("unknown kind %q", req.Kind)
	}
	if err := CheckName("source", req.Source); err != nil {
		return err
	}
	if req.Label == "" {
		req.Label = DefaultLabel(req.Kind, s.now())
	}
	if err := CheckName("label", req.Label); err != nil {
		return err
	}
	switch {
	case req.Kind == Restore && req.Target == "":
		return errors.New("a restore needs its target schema")
	case req.Kind != Restore && req.Target != "":
		return fmt.Errorf("a %s has no target", req.Kind)
	case req.Target != "":
		return CheckName("target", req.Target)
	}
	return nil
}

// lockKey is one "one at a time" rule a start must pass.
type lockKey struct {
	id    string // key of Service.recent
	what  string // for messages
	query string // visibility query of the running jobs it holds
}

// lockKeys are the rules of req: one job per source and kind, and for a
// restore one per target. A backup also waits for the fixed-ID full backup
// a refused refresh starts, and a refresh for `dbtrail refresh` of older
// releases.
func (s *Service) lockKeys(req Request) []lockKey {
	running := typeIn(req.Kind) + " AND ExecutionStatus = 'Running'"
	owner := fmt.Sprintf("%s = %s", AttrSource, quote(req.Source))
	switch req.Kind {
	case Backup:
		owner = fmt.Sprintf("(%s OR WorkflowId = %s)", owner, quote("fullbackup-"+req.Source))
	case Refresh:
		owner = fmt.Sprintf("(%s OR WorkflowId = %s)", owner, quote("refresh-"+req.Source))
	}
	keys := []lockKey{{id: "source/" + req.Source + "/" + string(req.Kind),
		what: fmt.Sprintf("a %s of source %s", req.Kind, req.Source), query: running + " AND " + owner}}
	if req.Kind == Restore {
		keys = append(keys, lockKey{id: "target/" + req.Target, what: "a restore into " + req.Target,
			query: running + fmt.Sprintf(" AND %s = %s", AttrTarget, quote(req.Target))})
	}
	return keys
}

// runningFor returns the ID of a running job key holds, or "".
func (s *Service) runningFor(ctx context.Context, key lockKey, req Request) (string, error) {
	if id := s.recent[key.id]; id != "" {
		d, err := s.c.DescribeWorkflowExecution(ctx, id, "")
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
		case err != nil:
			return "", fmt.Errorf("describe job %s: %w", id, err)
		case d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return id, nil
		}
	}
	resp, err := s.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: s.namespace, PageSize: 1, Query: key.query})
	if err != nil {
		return "", fmt.Errorf("list running jobs (%s): %w", key.what, err)
	}
	if ex := resp.GetExecutions(); len(ex) > 0 {
		return ex[0].GetExecution().GetWorkflowId(), nil
	}
	return "", nil
}

// ensureAttrs registers the search attributes once per Service: before a
// start, and before a listing, whose query names them (a namespace where
// none is registered yet would refuse it).
func (s *Service) ensureAttrs(ctx context.Context) error {
	s.attrsMu.Lock()
	defer s.attrsMu.Unlock()
	if s.attrsSet {
		return nil
	}
	if err := EnsureSearchAttributes(ctx, s.c, s.namespace); err != nil {
		return err
	}
	s.attrsSet = true
	return nil
}

// runURL is the run's page in the Temporal UI, or "".
func (s *Service) runURL(id, runID string) string {
	if s.ui == "" {
		return ""
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", s.ui, url.PathEscape(s.namespace),
		url.PathEscape(id), url.PathEscape(runID))
}

// quote is a visibility query's string literal of v.
func quote(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
