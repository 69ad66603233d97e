package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/payload"
)

var h0 = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

func archiveEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Activities{})
	return env
}

// TestArchiveWithoutLocation: a worker without an archive location plans
// nothing and nothing else runs.
func TestArchiveWithoutLocation(t *testing.T) {
	env := archiveEnv()
	env.OnActivity(a.PlanArchive, mock.Anything, mock.Anything).Return(calls.PlanArchiveResult{Reason: "no archive location"}, nil)
	env.ExecuteWorkflow(Archive, payload.ArchiveInput{Source: "main"})
	var res ArchiveResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Location != "" || res.Reason != "no archive location" || len(res.Hours) != 0 {
		t.Fatalf("result %+v", res)
	}
}

// TestArchiveHoursInOrder: the history file first, then each hour oldest
// first with the workflow's clock and the index window passed on, then the
// empty partitions; a failing hour fails the run and later hours are not
// touched.
func TestArchiveHoursInOrder(t *testing.T) {
	for _, failAt := range []int{-1, 1} {
		env := archiveEnv()
		var order []string
		env.OnActivity(a.PlanArchive, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PlanArchiveInput) (calls.PlanArchiveResult, error) {
			if in.IndexHours != 6 || in.Now.IsZero() {
				return calls.PlanArchiveResult{}, temporal.NewNonRetryableApplicationError("bad plan input", payload.ErrBadPlan, nil)
			}
			order = append(order, "plan")
			return calls.PlanArchiveResult{Location: "s3://b/p", Before: h0.Add(3 * time.Hour),
				Hours: []calls.ArchiveHourPlan{{Hour: h0}, {Hour: h0.Add(time.Hour)}, {Hour: h0.Add(2 * time.Hour)}}}, nil
		})
		env.OnActivity(a.ArchiveHistory, mock.Anything, mock.Anything).Return(func(context.Context, calls.ArchiveHistoryInput) (calls.ArchiveHistoryResult, error) {
			order = append(order, "history")
			return calls.ArchiveHistoryResult{Object: "main/history.json"}, nil
		})
		attempts := 0
		env.OnActivity(a.ArchiveHour, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.ArchiveHourInput) (calls.ArchiveHourResult, error) {
			i := int(in.Hour.Sub(h0) / time.Hour)
			if i == failAt {
				attempts++
				return calls.ArchiveHourResult{}, errors.New("upload archive main/archives/2026-11-29/09.parquet to s3://b/p: connection refused")
			}
			order = append(order, in.Hour.Format("15"))
			return calls.ArchiveHourResult{Hour: in.Hour, Events: 10, Bytes: 100}, nil
		})
		env.OnActivity(a.DropEmptyPartitions, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.DropEmptyPartitionsInput) (calls.DropEmptyPartitionsResult, error) {
			order = append(order, "empty before "+in.Before.Format("15"))
			return calls.DropEmptyPartitionsResult{}, nil
		})
		env.ExecuteWorkflow(Archive, payload.ArchiveInput{Source: "main", IndexHours: 6})
		if failAt >= 0 {
			err := env.GetWorkflowError()
			if err == nil || !strings.Contains(err.Error(), "connection refused") || attempts != MaxAttempts {
				t.Fatalf("failing hour: %v after %d attempts", err, attempts)
			}
			if want := []string{"plan", "history", "08"}; !slices.Equal(order, want) {
				t.Fatalf("steps %v, want %v", order, want)
			}
			continue
		}
		var res ArchiveResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		if want := []string{"plan", "history", "08", "09", "10", "empty before 11"}; !slices.Equal(order, want) {
			t.Fatalf("steps %v, want %v", order, want)
		}
		if len(res.Hours) != 3 || res.Events != 30 || res.Bytes != 300 {
			t.Fatalf("result %+v", res)
		}
	}
}

// TestReindexGoesOnPastABrokenArchive: an archive file that cannot be
// read is named, the others are restored, the history and checkpoint are
// written, and the run fails with the result as its details.
func TestReindexGoesOnPastABrokenArchive(t *testing.T) {
	env := archiveEnv()
	env.OnActivity(a.PrepareReindex, mock.Anything, mock.Anything).Return(calls.PrepareReindexResult{Location: "s3://b/p",
		Hours: []calls.ReindexHourPlan{{Hour: h0, Object: "main/archives/2026-11-29/08.parquet"},
			{Hour: h0.Add(time.Hour), Object: "main/archives/2026-11-29/09.parquet"},
			{Hour: h0.Add(2 * time.Hour), Object: "main/archives/2026-11-29/10.parquet"}}}, nil)
	var restored []string
	env.OnActivity(a.ReindexHour, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.ReindexHourInput) (calls.ReindexHourResult, error) {
		if in.Hour.Equal(h0.Add(time.Hour)) {
			return calls.ReindexHourResult{}, temporal.NewNonRetryableApplicationError(
				"archive "+in.Object+" in s3://b/p: file ends at offset 100", payload.ErrBrokenArchive, nil)
		}
		restored = append(restored, in.Object)
		return calls.ReindexHourResult{Hour: in.Hour, Events: 5, Done: true}, nil
	})
	var finish calls.FinishReindexInput
	env.OnActivity(a.FinishReindex, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.FinishReindexInput) (calls.FinishReindexResult, error) {
		finish = in
		return calls.FinishReindexResult{Hours: 2, Events: 10, FirstSeq: 1, LastSeq: 20, Outcome: "capture resumes"}, nil
	})
	env.ExecuteWorkflow(Reindex, payload.ReindexInput{Source: "main"})
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != payload.ErrBrokenArchive || !strings.Contains(err.Error(), "09.parquet") {
		t.Fatalf("workflow error %v", err)
	}
	var res ReindexResult
	if err := app.Details(&res); err != nil || res.Hours != 2 || len(res.Failed) != 1 {
		t.Fatalf("details %+v %v", res, err)
	}
	if len(restored) != 2 || len(finish.Failed) != 1 || !strings.Contains(finish.Failed[0], "09.parquet") {
		t.Fatalf("restored %v, finish %+v", restored, finish)
	}
}
