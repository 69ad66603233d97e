package jobs

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// Outcome says how a run that did not complete ended: "failed:" and the
// root cause, "was canceled", "was terminated" or "timed out".
func Outcome(err error) string {
	var ended *temporal.WorkflowExecutionError
	if errors.As(err, &ended) {
		switch ended.Unwrap().(type) {
		case *temporal.CanceledError:
			return "was canceled"
		case *temporal.TerminatedError:
			return "was terminated"
		case *temporal.TimeoutError:
			return "timed out"
		}
	}
	return "failed: " + FailureReason(err)
}

// FailureReason is the root cause of a run's failure: the message of the
// failure under the innermost activity or child workflow (or under the run
// itself), after the types of the child workflows and the activity it came
// through, e.g. "ConvertTable: dump.t.00000.sql:12: ...". The SDK's own
// error string repeats every level's ids, event ids and types.
func FailureReason(err error) string {
	var path []string
	cause := err
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch t := e.(type) {
		case *temporal.WorkflowExecutionError:
			path, cause = nil, t.Unwrap()
		case *temporal.ChildWorkflowExecutionError:
			path, cause = append(path, t.WorkflowType()), t.Unwrap()
		case *temporal.ActivityError:
			path, cause = append(path, t.ActivityType().GetName()), t.Unwrap()
		}
	}
	return strings.Join(append(path, failureMessage(cause)), ": ")
}

// failureMessage is err's message without the SDK's decorations: an
// application error's own message, followed by its cause's when the message
// does not already hold it.
func failureMessage(err error) string {
	app, ok := err.(*temporal.ApplicationError)
	if !ok {
		if err == nil {
			return "no reason given"
		}
		return err.Error()
	}
	msg := app.Message()
	if c := app.Unwrap(); c != nil {
		switch cm := failureMessage(c); {
		case msg == "":
			msg = cm
		case !strings.Contains(msg, cm):
			msg += ": " + cm
		}
	}
	if msg == "" {
		return app.Type() + " without a message"
	}
	return msg
}
