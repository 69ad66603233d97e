package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/payload"
)

// PreviewTimeout bounds how long PreviewRetention waits for a worker.
const PreviewTimeout = time.Minute

// NextRetention is what the next retention run of a source would do: the
// policy of the worker that planned it (the retention policy is the
// worker's configuration; a schedule carries none), when it runs next, and
// the plan that worker made now (workflows.RetentionPreview), of which
// Remove are the removals.
type NextRetention struct {
	Policy retention.Policy `json:"policy"`
	NextAt *time.Time       `json:"next_at,omitempty"`
	Remove []retention.Item `json:"remove"`
	Plan   retention.Plan   `json:"plan"`
}

// PreviewRetention asks a worker what the next run of source's retention
// schedule would remove, with that worker's policy; ok is false when
// the source has no retention schedule. It removes nothing.
func (s *Service) PreviewRetention(ctx context.Context, source string) (next NextRetention, ok bool, err error) {
	id := payload.RetentionWorkflowID(source)
	d, err := s.c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return next, false, nil
	}
	if err != nil {
		return next, false, fmt.Errorf("retention schedule of %s: %w", source, err)
	}
	act, isWF := d.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !isWF || len(act.Args) != 1 {
		return next, false, fmt.Errorf("retention schedule %s: its action is not a Retention run with one argument", id)
	}
	var in payload.RetentionInput
	if err := decodeArg(act.Args[0], &in); err != nil {
		return next, false, fmt.Errorf("retention schedule %s: %w", id, err)
	}
	if len(d.Info.NextActionTimes) > 0 {
		t := d.Info.NextActionTimes[0].UTC()
		next.NextAt = &t
	}
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: fmt.Sprintf("retention-preview-%s-%d", source, s.now().UnixNano()), TaskQueue: s.taskQueue,
		WorkflowExecutionTimeout: PreviewTimeout,
	}, "RetentionPreview", in) // workflows.RetentionPreview, by its registered name
	if err != nil {
		return next, false, fmt.Errorf("preview retention of %s: %w", source, err)
	}
	if err := run.Get(ctx, &next.Plan); err != nil {
		return next, false, fmt.Errorf("preview retention of %s: %w", source, err)
	}
	next.Policy = next.Plan.Policy
	next.Remove = next.Plan.Removals()
	if next.Remove == nil {
		next.Remove = []retention.Item{}
	}
	return next, true, nil
}

// decodeArg decodes a schedule action's argument (a *commonpb.Payload on
// Describe) into v.
func decodeArg(arg any, v any) error {
	p, ok := arg.(*commonpb.Payload)
	if !ok {
		return fmt.Errorf("argument is a %T, not a payload", arg)
	}
	return converter.GetDefaultDataConverter().FromPayload(p, v)
}
