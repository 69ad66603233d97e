package temporalclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ScheduleSpec is a schedule that starts a workflow at a fixed interval.
type ScheduleSpec struct {
	// ID names the schedule; fixed per source and kind, e.g. "refresh-main".
	ID string
	// Every is the interval between starts (at least one second).
	Every time.Duration
	// Workflow is the registered workflow type name.
	Workflow string
	// TaskQueue is where the workflow's tasks go.
	TaskQueue string
	// Args are the workflow's arguments.
	Args []any
	// WorkflowID is the prefix of the started runs' IDs (the server appends
	// the scheduled time); default ID.
	WorkflowID string
	// Attrs are search attributes of the started runs (registered first;
	// package jobs sets the source's, so its one-job-at-a-time rule sees
	// scheduled runs).
	Attrs temporal.SearchAttributes
}

// EnsureSchedule creates the schedule, or brings an existing one with the
// same ID to spec (interval, workflow, arguments), so calling it on every
// start of a process leaves exactly one schedule. The overlap policy is
// always SKIP: a start due while the previous run is still open is dropped,
// so at most one run per schedule is open at a time. A schedule paused by a
// user stays paused.
func EnsureSchedule(ctx context.Context, c client.Client, spec ScheduleSpec) error {
	if spec.ID == "" || spec.Workflow == "" || spec.TaskQueue == "" {
		return errors.New("ensure schedule: ID, Workflow and TaskQueue are required")
	}
	if spec.Every < time.Second {
		return fmt.Errorf("ensure schedule %s: interval %s is under one second", spec.ID, spec.Every)
	}
	if spec.WorkflowID == "" {
		spec.WorkflowID = spec.ID
	}
	sc := c.ScheduleClient()
	_, err := sc.Create(ctx, client.ScheduleOptions{
		ID:      spec.ID,
		Spec:    scheduleSpec(spec),
		Action:  scheduleAction(spec),
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("create schedule %s: %w", spec.ID, err)
	}
	err = sc.GetHandle(ctx, spec.ID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := in.Description.Schedule
			ss := scheduleSpec(spec)
			s.Spec = &ss
			s.Action = scheduleAction(spec)
			if s.Policy == nil {
				s.Policy = &client.SchedulePolicies{}
			}
			s.Policy.Overlap = enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
			return &client.ScheduleUpdate{Schedule: &s}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", spec.ID, err)
	}
	return nil
}

// DeleteSchedule deletes the schedule id; runs it started go on. Deleting a
// schedule that does not exist is not an error.
func DeleteSchedule(ctx context.Context, c client.Client, id string) error {
	err := c.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
	var notFound *serviceerror.NotFound
	if err != nil && !errors.As(err, &notFound) {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	return nil
}

func scheduleSpec(spec ScheduleSpec) client.ScheduleSpec {
	return client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: spec.Every}}}
}

func scheduleAction(spec ScheduleSpec) *client.ScheduleWorkflowAction {
	a := &client.ScheduleWorkflowAction{
		ID:        spec.WorkflowID,
		Workflow:  spec.Workflow,
		Args:      spec.Args,
		TaskQueue: spec.TaskQueue,
	}
	a.TypedSearchAttributes = spec.Attrs
	return a
}
