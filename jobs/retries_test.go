package jobs

import (
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dbtrail/dbtrail/payload"
)

// TestRetriesNameStepTableAttemptAndCause: a pending activity that failed
// is listed with its step, the table of its last heartbeat, its attempt of
// its limit, its error on one line (each cause once) and its next
// attempt; one that
// has not failed is not listed, and a heartbeat without a table leaves
// the table out.
func TestRetriesNameStepTableAttemptAndCause(t *testing.T) {
	details := func(v any) *commonpb.Payloads {
		p, err := converter.GetDefaultDataConverter().ToPayloads(v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	// As the SDK sends an activity's wrapped error: the whole text, then
	// each wrapped error's.
	failure := &failurepb.Failure{Message: "refresh app.big: write app/big.parquet:\n no space left on device",
		Cause: &failurepb.Failure{Message: "write app/big.parquet: no space left on device", Cause: &failurepb.Failure{Message: "no space left on device"}}}
	d := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: []*workflow.PendingActivityInfo{
		{ActivityType: &commonpb.ActivityType{Name: "RefreshTable"}, State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED,
			Attempt: 3, MaximumAttempts: 10, LastFailure: failure, HeartbeatDetails: details(payload.RefreshTableProgress{Table: "app.big"}),
			NextAttemptScheduleTime: timestamppb.New(now.Add(20 * time.Second))},
		{ActivityType: &commonpb.ActivityType{Name: "RefreshTable"}, Attempt: 1, HeartbeatDetails: details(payload.RefreshTableProgress{Table: "app.small"})},
		{ActivityType: &commonpb.ActivityType{Name: "MapPosition"}, Attempt: 2, MaximumAttempts: 10,
			LastFailure:      &failurepb.Failure{Message: "load checkpoint main", Cause: &failurepb.Failure{Message: "sql: database is closed"}},
			HeartbeatDetails: details("waiting for capture to reach binlog.000001:4")},
	}}
	rs := Retries(d)
	if len(rs) != 2 {
		t.Fatalf("retries %+v: want the two failed steps", rs)
	}
	want := "retrying RefreshTable app.big (attempt 3 of 10): refresh app.big: write app/big.parquet: no space left on device; next attempt in 20s"
	if got := rs[0].String(now); got != want {
		t.Errorf("retry shown as %q, want %q", got, want)
	}
	if got := rs[1].String(now); !strings.HasPrefix(got, "retrying MapPosition (attempt 2 of 10): load checkpoint main: sql: database is closed") {
		t.Errorf("retry without a table shown as %q", got)
	}
}
