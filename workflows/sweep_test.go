package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// sweptRefresh runs a refresh of one linked table whose sweep of leftover
// parts is sweep, and returns its result and how many times the sweep was
// tried.
func sweptRefresh(t *testing.T, sweep func() (calls.SweepPartsResult, error)) (RefreshResult, int) {
	t.Helper()
	env := refreshEnv(t, foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{{Key: tA, Action: foldplan.ActionLink}}})
	attempts := 0
	env.OnActivity(a.SweepParts, mock.Anything, mock.Anything).Return(func(context.Context, calls.SweepPartsInput) (calls.SweepPartsResult, error) {
		attempts++
		return sweep()
	})
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{Schema: "app", Table: "a"}, nil)
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishRefreshInput) (calls.PublishResult, error) {
		return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(calls.PruneResult{}, nil)
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	var res RefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res, attempts
}

// TestRefreshSweepFailureTriedTwiceThenGoesOn: a sweep that fails (the
// store cannot be listed) is tried sweepPartsRetry.MaximumAttempts times,
// not the short options' attempts, and the refresh publishes anyway.
func TestRefreshSweepFailureTriedTwiceThenGoesOn(t *testing.T) {
	res, attempts := sweptRefresh(t, func() (calls.SweepPartsResult, error) {
		return calls.SweepPartsResult{}, errors.New("list parts on s3://b: connection refused")
	})
	if attempts != int(sweepPartsRetry.MaximumAttempts) || attempts > 3 || res.SweptParts != nil || res.SnapshotID == "" {
		t.Fatalf("sweep tried %d times; result %+v", attempts, res)
	}
}

// TestRefreshReportsWhatTheSweepDid: a sweep that found nothing to do
// leaves SweptParts nil; one that only found locked objects, or only
// skipped folders, or put back a record after deleting parts, is reported.
func TestRefreshReportsWhatTheSweepDid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		res    calls.SweepPartsResult
		report bool
	}{
		{"nothing", calls.SweepPartsResult{}, false},
		{"removed", calls.SweepPartsResult{Removed: []string{"20261129T080000Z"}, Deleted: 2}, true},
		{"locked only", calls.SweepPartsResult{Locked: []string{"main/parts/20261129T080000Z/3-1/app/t.parquet"}}, true},
		{"skipped only", calls.SweepPartsResult{Skipped: []calls.SkippedPart{{ID: "20261129T080000Z", Reason: "AccessDenied"}}}, true},
	} {
		res, attempts := sweptRefresh(t, func() (calls.SweepPartsResult, error) { return tc.res, nil })
		if attempts != 1 || (res.SweptParts != nil) != tc.report {
			t.Errorf("%s: tried %d times, reported %+v", tc.name, attempts, res.SweptParts)
		}
	}
}
