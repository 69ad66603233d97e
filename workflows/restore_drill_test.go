package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRestoreDrillRecordsVerdict: a drill that passes is recorded ok with
// its moment ("latest" when none was given), tables and rows, after its
// scratch schemas were dropped; one that fails is recorded failed with the
// failure's message, and the run fails with the restore's error.
func TestRestoreDrillRecordsVerdict(t *testing.T) {
	for _, fail := range []bool{false, true} {
		env, _ := restoreEnv(t, 2)
		env.OnActivity(a.VerifyRestore, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.VerifyRestoreInput) (calls.VerifyRestoreResult, error) {
			if fail && in.Job.Name == "t2" {
				return calls.VerifyRestoreResult{}, temporal.NewNonRetryableApplicationError("app.t2: fingerprint differs", "Mismatch", nil)
			}
			return calls.VerifyRestoreResult{Rows: 250, Fingerprint: "250:00"}, nil
		})
		var dropped []string
		env.OnActivity(a.EndRestore, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.EndRestoreInput) error {
			if !in.Spec.Drill {
				t.Error("EndRestore of a drill without Drill set")
			}
			dropped = in.DropSchemas
			return nil
		})
		var recorded []index.Drill
		env.OnActivity(a.RecordDrill, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.RecordDrillInput) error {
			recorded = append(recorded, in.Drill)
			return nil
		})
		env.ExecuteWorkflow(RestoreDrill, payload.RestoreDrillInput{TargetAddr: "scratch:3306", Restore: payload.RestoreInput{RestoreSpec: payload.RestoreSpec{Source: "main"}}})
		err := env.GetWorkflowError()
		if len(recorded) != 1 {
			t.Fatalf("fail=%v: %d drills recorded", fail, len(recorded))
		}
		d := recorded[0]
		if d.Source != "main" || d.Target != "scratch:3306" || d.Moment != "latest" || d.StartedAt.IsZero() || d.Finished.Before(d.StartedAt) {
			t.Fatalf("fail=%v: recorded %+v", fail, d)
		}
		if !fail {
			if err != nil || d.Verdict != index.DrillOK || d.Tables != 2 || d.Rows != 500 || d.Failure != "" || len(dropped) != 1 || dropped[0] != "app" {
				t.Fatalf("passed drill: recorded %+v, dropped %v, %v", d, dropped, err)
			}
			continue
		}
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != "Mismatch" || d.Verdict != index.DrillFailed || !strings.Contains(d.Failure, "fingerprint differs") {
			t.Fatalf("failed drill: recorded %+v, run error %v", d, err)
		}
	}
}
