package workflows

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/payload"
)

// restoreEnv is a test environment whose PlanRestore plans tables t1..tn
// and whose LoadTable loads 100 rows a call out of 250 per table, the
// second call of t1 paused.
func restoreEnv(t *testing.T, n int) (*testsuite.TestWorkflowEnvironment, *sync.Map) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Activities{})
	var jobs []calls.RestoreTableJob
	for i := range n {
		name := string(rune('1' + i))
		jobs = append(jobs, calls.RestoreTableJob{RestoreID: "r1", Table: moment.TablePlan{Schema: "app", Table: "t" + name}, Schema: "app", Name: "t" + name, Load: "t" + name})
	}
	env.OnActivity(a.PlanRestore, mock.Anything, mock.Anything).Return(calls.PlanRestoreResult{RestoreID: "r1", Jobs: jobs}, nil)
	loads := &sync.Map{}
	env.OnActivity(a.LoadTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.LoadTableInput) (calls.LoadTableResult, error) {
		v, _ := loads.LoadOrStore(in.Job.Name, new(int64))
		c := v.(*int64)
		*c++
		if in.Job.Name == "t1" && *c == 2 {
			return calls.LoadTableResult{Rows: 100, Total: 250, ChunkRows: 50, Paused: "replica r lags 3s (max 1s)"}, nil
		}
		done := *c - 1
		if in.Job.Name == "t1" {
			done--
		}
		rows := min(250, (done+1)*100)
		return calls.LoadTableResult{Rows: rows, Total: 250, Written: rows - done*100, ChunkRows: in.ChunkRows + 10,
			ChunkMillis: []int32{100}, Done: rows == 250, Def: &schema.Table{Schema: "app", Name: in.Job.Name}}, nil
	})
	return env, loads
}

// TestRestoreLoadsSlicesThenVerifies: every table is loaded slice after
// slice until done (the chunk size carried from one to the next), then
// verified; a paused slice shows in the progress; the end removes the
// staged tables.
func TestRestoreLoadsSlicesThenVerifies(t *testing.T) {
	env, loads := restoreEnv(t, 3)
	var verified []string
	var paused string
	env.OnActivity(a.VerifyRestore, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.VerifyRestoreInput) (calls.VerifyRestoreResult, error) {
		verified = append(verified, in.Job.Name)
		return calls.VerifyRestoreResult{Rows: 250, Fingerprint: "250:00"}, nil
	})
	ended := false
	env.OnActivity(a.EndRestore, mock.Anything, mock.Anything).Return(func(context.Context, calls.EndRestoreInput) error { ended = true; return nil })
	env.SetOnActivityCompletedListener(func(_ *activity.Info, _ converter.EncodedValue, _ error) {
		if v, err := env.QueryWorkflow(payload.ProgressQuery); err == nil {
			var p payload.RestoreProgress
			if v.Get(&p) == nil && p.Paused != "" {
				paused = p.Paused
			}
		}
	})
	env.ExecuteWorkflow(Restore, payload.RestoreInput{Parallel: 2})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RestoreResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(verified) != 3 || !ended || res.Rows != 750 || res.Written != 750 || len(res.Tables[0].ChunkMillis) != 3 {
		t.Fatalf("verified %v, ended %v, result %+v", verified, ended, res)
	}
	if v, _ := loads.Load("t1"); *v.(*int64) != 4 {
		t.Fatalf("t1 loaded in %d calls, want 4 (one paused)", *v.(*int64))
	}
	if !strings.Contains(paused, "app.t1: replica r lags 3s") {
		t.Fatalf("progress never said why t1 paused: %q", paused)
	}
}

// TestRestoreMismatchFailsNamingTheTable: a table whose verification
// fails fails the run with the table's name, and the failed run removes
// its staged tables (EndRestore, no schema dropped): its checkpoints stay
// in the target for a rerun, which stages again.
func TestRestoreMismatchFailsNamingTheTable(t *testing.T) {
	env, _ := restoreEnv(t, 1)
	env.OnActivity(a.VerifyRestore, mock.Anything, mock.Anything).Return(calls.VerifyRestoreResult{},
		temporal.NewNonRetryableApplicationError("restored table app.t1 does not match app.t1 at the moment", activities.ErrRestoreMismatch, nil))
	var ended []calls.EndRestoreInput
	env.OnActivity(a.EndRestore, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.EndRestoreInput) error {
		ended = append(ended, in)
		return nil
	})
	env.ExecuteWorkflow(Restore, payload.RestoreInput{})
	var app *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &app) || app.Type() != activities.ErrRestoreMismatch || !strings.Contains(err.Error(), "app.t1") {
		t.Fatalf("want a RestoreMismatch naming app.t1, got %v", err)
	}
	if len(ended) != 1 || ended[0].RestoreID != "r1" || len(ended[0].DropSchemas) != 0 {
		t.Fatalf("the failed run's cleanup: %+v, want one EndRestore of r1 dropping nothing", ended)
	}
}

// lostLoadsEnv is a test environment planning one table, app.t1, whose
// LoadTable attempts time out (their worker lost) with the heartbeat's
// Loaded given by lost(call), the calls counted from 1, until lost
// returns -1: then the call loads the table whole.
func lostLoadsEnv(t *testing.T, lost func(call int) int64) (*testsuite.TestWorkflowEnvironment, *int) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Activities{})
	job := calls.RestoreTableJob{RestoreID: "r1", Table: moment.TablePlan{Schema: "app", Table: "t1"}, Schema: "app", Name: "t1", Load: "t1"}
	env.OnActivity(a.PlanRestore, mock.Anything, mock.Anything).Return(calls.PlanRestoreResult{RestoreID: "r1", Jobs: []calls.RestoreTableJob{job}}, nil)
	n := new(int)
	env.OnActivity(a.LoadTable, mock.Anything, mock.Anything).Return(func(context.Context, calls.LoadTableInput) (calls.LoadTableResult, error) {
		*n++
		if loaded := lost(*n); loaded >= 0 {
			return calls.LoadTableResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil,
				calls.LoadProgress{Table: "app.t1", Stage: restore.StageStaging, Rows: 7, Loaded: loaded})
		}
		return calls.LoadTableResult{Rows: 250, Total: 250, Written: 250, Done: true, Def: &schema.Table{Schema: "app", Name: "t1"}}, nil
	})
	env.OnActivity(a.VerifyRestore, mock.Anything, mock.Anything).Return(calls.VerifyRestoreResult{Rows: 250, Fingerprint: "250:00"}, nil)
	env.OnActivity(a.EndRestore, mock.Anything, mock.Anything).Return(nil)
	return env, n
}

// TestRestoreCallsALostLoadAgainWhileItMoves: a LoadTable whose
// MaxAttempts attempts all lost their worker is called again when the
// target came to hold more rows (the heartbeat's Loaded, kept through the
// staging's reports), and the restore finishes; one whose rows did not
// move since the last call fails the run with the timeout, not retried
// further.
func TestRestoreCallsALostLoadAgainWhileItMoves(t *testing.T) {
	for _, c := range []struct {
		name  string
		lost  func(call int) int64
		calls int
		fails bool
	}{
		{"moving, then loaded", func(call int) int64 {
			if call > 2*MaxAttempts {
				return -1
			}
			return int64(call) * 10
		}, 2*MaxAttempts + 1, false},
		{"never moved", func(int) int64 { return 0 }, MaxAttempts, true},
		{"moved once, then stuck", func(int) int64 { return 50 }, 2 * MaxAttempts, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, n := lostLoadsEnv(t, c.lost)
			env.ExecuteWorkflow(Restore, payload.RestoreInput{})
			err := env.GetWorkflowError()
			var te *temporal.TimeoutError
			if c.fails != (err != nil) || (c.fails && !errors.As(err, &te)) || *n != c.calls {
				t.Fatalf("%d LoadTable calls (want %d), run error %v (want one: %v, a timeout)", *n, c.calls, err, c.fails)
			}
		})
	}
}
