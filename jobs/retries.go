package jobs

import (
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
)

// Retry is a step of a running job that failed and waits for, or runs,
// another attempt: what shows a DBA, next to the progress, that the job is
// not just slow.
type Retry struct {
	// Step is the activity, e.g. RefreshTable.
	Step string `json:"step"`
	// Table is the table the step works on, from its last heartbeat's
	// progress (its Table field); "" when the step has none or has not
	// heartbeated yet (the cause then usually names it).
	Table string `json:"table,omitempty"`
	// Attempt is the attempt running or scheduled next; MaxAttempts its
	// limit (0: none).
	Attempt     int32 `json:"attempt"`
	MaxAttempts int32 `json:"max_attempts,omitempty"`
	// Cause is the last failure's message, on one line: the step's own
	// error, which names what and where down to the root cause (the
	// innermost cause alone, "not a directory", would say neither).
	Cause string `json:"cause"`
	// NextAttempt is when the next attempt starts (absent while one runs).
	NextAttempt *time.Time `json:"next_attempt,omitempty"`
}

// Retries lists the pending activities of a described run that have
// failed at least once (their last failure is kept until they succeed, and
// then they are no longer pending).
func Retries(d *workflowservice.DescribeWorkflowExecutionResponse) []Retry {
	var out []Retry
	for _, pa := range d.GetPendingActivities() {
		f := pa.GetLastFailure()
		if f == nil {
			continue
		}
		r := Retry{Step: pa.GetActivityType().GetName(), Table: heartbeatTable(pa.GetHeartbeatDetails()),
			Attempt: pa.GetAttempt(), MaxAttempts: pa.GetMaximumAttempts(), Cause: oneLine(failureText(f))}
		if t := pa.GetNextAttemptScheduleTime(); t != nil && t.IsValid() && !t.AsTime().IsZero() {
			next := t.AsTime()
			r.NextAttempt = &next
		}
		out = append(out, r)
	}
	return out
}

// String is r as the CLI shows it next to the progress: step, attempt of
// limit, cause, and when the next attempt runs (relative to now).
func (r Retry) String(now time.Time) string {
	att := fmt.Sprintf("attempt %d", r.Attempt)
	if r.MaxAttempts > 0 {
		att += fmt.Sprintf(" of %d", r.MaxAttempts)
	}
	step := r.Step
	if r.Table != "" {
		step += " " + r.Table
	}
	s := fmt.Sprintf("retrying %s (%s): %s", step, att, r.Cause)
	if r.NextAttempt != nil {
		if d := r.NextAttempt.Sub(now).Round(time.Second); d > 0 {
			s += fmt.Sprintf("; next attempt in %s", d)
		} else {
			s += "; next attempt now"
		}
	}
	return s
}

// failureText is f's message followed by its causes' where the message
// does not already hold them (as FailureReason reads a run's failure).
func failureText(f *failurepb.Failure) string {
	msg := strings.Join(strings.Fields(f.GetMessage()), " ")
	if c := f.GetCause(); c != nil {
		switch cm := failureText(c); {
		case msg == "":
			msg = cm
		case !strings.Contains(msg, cm):
			msg += ": " + cm
		}
	}
	return msg
}

// heartbeatTable is the Table field of the progress a step last
// heartbeated (the progress types of the activities that work on one
// table have one), or "".
func heartbeatTable(p *commonpb.Payloads) string {
	if len(p.GetPayloads()) == 0 {
		return ""
	}
	var progress struct{ Table string }
	if err := converter.GetDefaultDataConverter().FromPayload(p.GetPayloads()[0], &progress); err != nil {
		return ""
	}
	return progress.Table
}

// oneLine folds a message's white space and cuts it to 300 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
