// Package temporalclient holds the client-side helpers every dbtrail process
// uses against any Temporal (embedded or not): Dial, StartWorkflow (one run
// per workflow ID), EnsureSchedule and Runs. It links no Temporal server; the
// embedded server is package embedded.
package temporalclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// ErrAlreadyRunning is matched (errors.Is) by the error StartWorkflow
// returns when a run with the requested workflow ID is still open.
var ErrAlreadyRunning = errors.New("workflow already running")

// AlreadyRunningError is StartWorkflow's error when the workflow ID is held
// by an open run. It matches ErrAlreadyRunning and unwraps to the server's
// *serviceerror.WorkflowExecutionAlreadyStarted.
type AlreadyRunningError struct {
	WorkflowID string
	RunID      string // the open run
	Err        error
}

func (e *AlreadyRunningError) Error() string {
	return fmt.Sprintf("workflow %s is already running (run %s): wait for it to finish or cancel it", e.WorkflowID, e.RunID)
}

// Is reports whether target is ErrAlreadyRunning.
func (e *AlreadyRunningError) Is(target error) bool { return target == ErrAlreadyRunning }

func (e *AlreadyRunningError) Unwrap() error { return e.Err }

// Dial connects to the Temporal frontend at addr (host:port) for namespace
// without TLS or credentials (an embedded server on loopback) and checks
// the connection before returning. The SDK's messages go to log
// (slog.Default() when nil). The caller closes the client. A frontend that
// asks for credentials is dialled through Connection.
func Dial(ctx context.Context, addr, namespace string, log *slog.Logger) (client.Client, error) {
	return Connection{Addr: addr, Namespace: namespace}.Dial(ctx, log)
}

// StartWorkflow starts workflow wf (a function or a registered type name)
// with args and returns its run. It always sets
// WorkflowExecutionErrorWhenAlreadyStarted, so a start whose workflow ID is
// held by an open run fails with an *AlreadyRunningError (matching
// ErrAlreadyRunning) instead of silently returning the running one. opts.ID must be set: dbtrail
// uses fixed IDs for one run at a time per source and kind.
func StartWorkflow(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if opts.ID == "" {
		return nil, errors.New("start workflow: a workflow ID is required")
	}
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	run, err := c.ExecuteWorkflow(ctx, opts, wf, args...)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, &AlreadyRunningError{WorkflowID: opts.ID, RunID: started.RunId, Err: err}
		}
		return nil, fmt.Errorf("start workflow %s: %w", opts.ID, err)
	}
	return run, nil
}

// DefaultNamespace is the namespace dbtrail uses when none is given.
const DefaultNamespace = "default"

// sdkLogger adapts log (slog.Default() when nil) to the Temporal SDK's
// logger (clients and workers).
func sdkLogger(log *slog.Logger) sdklog.Logger {
	if log == nil {
		log = slog.Default()
	}
	return sdklog.NewStructuredLogger(log)
}
