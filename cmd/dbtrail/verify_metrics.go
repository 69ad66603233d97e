package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/jobs"
)

// lastVerifyFunc returns the verdicts of source's last finished verify and
// when it closed (Unix seconds); ok is false when none finished.
type lastVerifyFunc func(ctx context.Context) (res calls.VerifySnapshotResult, closed float64, ok bool, err error)

// verifyCollector exports the verdicts of a source's last finished Verify
// job on the process's /metrics, asked of Temporal at each scrape (the
// job's result). Before dev has its Temporal client, and while no verify
// finished, it exports nothing; a failed read exports an invalid metric.
type verifyCollector struct {
	last       atomic.Pointer[lastVerifyFunc]
	mismatched *prometheus.Desc
	failed     *prometheus.Desc
	when       *prometheus.Desc
}

func newVerifyCollector(source string) *verifyCollector {
	l := prometheus.Labels{"source": source}
	return &verifyCollector{
		mismatched: prometheus.NewDesc("dbtrail_verify_mismatched_tables", "Tables the last verify found different from the source.", nil, l),
		failed:     prometheus.NewDesc("dbtrail_verify_unverified_tables", "Tables the last verify could not decide (inconclusive or error).", nil, l),
		when:       prometheus.NewDesc("dbtrail_verify_last_timestamp_seconds", "When the last verify finished (Unix seconds).", nil, l),
	}
}

// useJobs makes the collector read the last verify of source from svc.
func (c *verifyCollector) useJobs(svc *jobs.Service, source string) {
	f := lastVerifyFunc(func(ctx context.Context) (calls.VerifySnapshotResult, float64, bool, error) {
		return lastVerify(ctx, svc, source)
	})
	c.last.Store(&f)
}

// lastVerify is the result of source's newest finished verify whose
// result holds verdicts (a failed verify has none: the one before it
// counts).
func lastVerify(ctx context.Context, svc *jobs.Service, source string) (calls.VerifySnapshotResult, float64, bool, error) {
	j, ok, err := svc.Last(ctx, jobs.Verify, source)
	if err != nil || !ok {
		return calls.VerifySnapshotResult{}, 0, false, err
	}
	if len(j.Result) == 0 || j.ClosedAt == nil {
		return calls.VerifySnapshotResult{}, 0, false, nil
	}
	var res calls.VerifySnapshotResult
	if err := json.Unmarshal(j.Result, &res); err != nil {
		return res, 0, false, fmt.Errorf("result of verify %s: %w", j.ID, err)
	}
	return res, float64(j.ClosedAt.Unix()), true, nil
}

func (c *verifyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.mismatched
	ch <- c.failed
	ch <- c.when
}

func (c *verifyCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.last.Load()
	if f == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), drillScrapeTimeout)
	defer cancel()
	res, when, ok, err := (*f)(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.mismatched, errors.Join(errors.New("last verify"), err))
		return
	}
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.mismatched, prometheus.GaugeValue, float64(res.Mismatch))
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.GaugeValue, float64(res.Inconclusive+res.Errors))
	ch <- prometheus.MustNewConstMetric(c.when, prometheus.GaugeValue, when)
}

// jobsService is the jobs service of dev's own client.
func jobsService(c client.Client, namespace, taskQueue string) *jobs.Service {
	return jobs.New(jobs.Config{Client: c, Namespace: namespace, TaskQueue: taskQueue})
}

// previewWait bounds how long a status waits for a worker's retention
// plan.
const previewWait = 20 * time.Second

// retentionPreview answers next_retention of GET /v1/status: the plan of
// the next run of the source's retention schedule (nil without one).
func retentionPreview(svc *jobs.Service) func(ctx context.Context, source string) (any, error) {
	return func(ctx context.Context, source string) (any, error) {
		ctx, cancel := context.WithTimeout(ctx, previewWait)
		defer cancel()
		next, ok, err := svc.PreviewRetention(ctx, source)
		if err != nil {
			return map[string]string{"error": err.Error()}, nil
		}
		if !ok {
			return nil, nil
		}
		return next, nil
	}
}
