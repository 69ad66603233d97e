package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/payload"
)

// ScheduleState is one of a source's Temporal schedules as Temporal
// describes it now, for the console (its definition is a
// payload.Schedule): when it runs next, how often, and its last start
// with that run's state (a job's; a drill's run is no job, so its Last is
// absent).
type ScheduleState struct {
	// Name is what it runs: refresh, archive, verify, drill or retention.
	Name string `json:"name"`
	// ID is the schedule's ID in Temporal.
	ID     string `json:"id"`
	Every  string `json:"every,omitempty"` // its interval, as a Go duration
	Paused bool   `json:"paused"`
	Note   string `json:"note,omitempty"` // why it is paused, as its pauser wrote
	// NextAt is its next start (absent when paused or none is due).
	NextAt *time.Time `json:"next_at,omitempty"`
	// LastAt and LastRun are its last start and the workflow ID it
	// started (absent before its first start).
	LastAt  *time.Time `json:"last_at,omitempty"`
	LastRun string     `json:"last_run,omitempty"`
	// Last is the job of the last start, with its state and result or
	// error (absent when that run is not a job or is gone).
	Last *Job `json:"last,omitempty"`
}

// Schedules describes source's schedules (payload.Schedules, in that
// order); a schedule that does not exist (its interval
// was 0, or no worker ever ran for the source) is left out. It reads only.
func (s *Service) Schedules(ctx context.Context, source string) ([]ScheduleState, error) {
	if err := CheckName("source", source); err != nil {
		return nil, err
	}
	out := []ScheduleState{}
	for _, ws := range payload.Schedules {
		id := ws.ID(source)
		d, err := s.c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("schedule %s of %s: %w", id, source, err)
		}
		sc, err := s.schedule(ctx, ws.Name, id, d)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// schedule is the ScheduleState of one description; the last start's job is
// read when it is one.
func (s *Service) schedule(ctx context.Context, name, id string, d *client.ScheduleDescription) (ScheduleState, error) {
	sc := ScheduleState{Name: name, ID: id, Paused: d.Schedule.State != nil && d.Schedule.State.Paused}
	if d.Schedule.State != nil {
		sc.Note = d.Schedule.State.Note
	}
	if sp := d.Schedule.Spec; sp != nil && len(sp.Intervals) > 0 {
		sc.Every = sp.Intervals[0].Every.String()
	}
	if len(d.Info.NextActionTimes) > 0 && !sc.Paused {
		t := d.Info.NextActionTimes[0].UTC()
		sc.NextAt = &t
	}
	if n := len(d.Info.RecentActions); n > 0 {
		last := d.Info.RecentActions[n-1]
		t := last.ActualTime.UTC()
		sc.LastAt = &t
		if last.StartWorkflowResult != nil {
			sc.LastRun = last.StartWorkflowResult.WorkflowID
		}
	}
	if sc.LastRun == "" {
		return sc, nil
	}
	j, err := s.Get(ctx, sc.LastRun)
	switch {
	case errors.Is(err, ErrNotFound):
		return sc, nil
	case err != nil:
		return sc, fmt.Errorf("schedule %s: its last run: %w", id, err)
	}
	sc.Last = &j
	return sc, nil
}
