package e2e

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
)

// flakyRun runs FlakyStep (which fails twice, then succeeds) with at most
// 5 attempts a second apart, then waits for the "finish" signal.
func flakyRun(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 1, MaximumAttempts: 5}})
	if err := workflow.ExecuteActivity(ctx, "FlakyStep").Get(ctx, nil); err != nil {
		return err
	}
	workflow.GetSignalChannel(ctx, "finish").Receive(ctx, nil)
	return nil
}

// TestRetriesAreVisible: while a step fails and is retried, jobs.Retries
// (what the CLI shows next to the progress and the API's job status
// lists) names the step, the attempt of its limit and the root cause;
// once the step succeeds the run, still running, lists none.
func TestRetriesAreVisible(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := embedded.StartServer(ctx, embedded.ServerConfig{DataDir: filepath.Join(t.TempDir(), "temporal"), FrontendAddr: "127.0.0.1:0"})
	must(t, err)
	defer srv.Stop()
	c, err := temporalclient.Dial(ctx, srv.FrontendAddr(), srv.Namespace(), nil)
	must(t, err)
	defer c.Close()
	var attempts atomic.Int32
	release := make(chan struct{})
	w := worker.New(c, "flaky", worker.Options{})
	w.RegisterWorkflowWithOptions(flakyRun, workflow.RegisterOptions{Name: "FlakyRun"})
	w.RegisterActivityWithOptions(func(ctx context.Context) error {
		n := activity.GetInfo(ctx).Attempt
		attempts.Store(n)
		if n <= 2 {
			return errors.New("write shop/orders.parquet: no space left on device")
		}
		<-release // the third attempt runs until the test has looked
		return nil
	}, activity.RegisterOptions{Name: "FlakyStep"})
	must(t, w.Start())
	defer w.Stop()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "flaky", TaskQueue: "flaky"}, "FlakyRun")
	must(t, err)
	retries := func() []jobs.Retry {
		d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		must(t, err)
		return jobs.Retries(d)
	}
	var seen jobs.Retry
	for seen.Attempt < 3 {
		if ctx.Err() != nil {
			t.Fatal("the third attempt never showed")
		}
		if rs := retries(); len(rs) == 1 {
			seen = rs[0]
		}
		time.Sleep(100 * time.Millisecond)
	}
	text := seen.String(time.Now())
	for _, want := range []string{"retrying FlakyStep", "attempt 3 of 5", "no space left on device"} {
		if !strings.Contains(text, want) {
			t.Errorf("retry shown as %q; want it to say %q", text, want)
		}
	}
	close(release)
	for len(retries()) != 0 {
		if ctx.Err() != nil {
			t.Fatal("the retry still shows after the step succeeded")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("the step ran %d attempts, want 3", n)
	}
	must(t, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), "finish", nil))
	must(t, run.Get(ctx, nil))
}
