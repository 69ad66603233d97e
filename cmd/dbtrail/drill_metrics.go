package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dbtrail/dbtrail/internal/index"
)

// drillCollector exports a source's last restore drill (index table
// restore_drills) on the process's /metrics, read from the index at each
// scrape; a source without a drill exports nothing, an index that cannot
// be read exports an invalid metric (the scrape reports the error).
type drillCollector struct {
	store  *index.Store
	source string
	when   *prometheus.Desc
	ok     *prometheus.Desc
	rows   *prometheus.Desc
	took   *prometheus.Desc
}

// drillScrapeTimeout bounds the index read of one scrape.
const drillScrapeTimeout = 5 * time.Second

func newDrillCollector(store *index.Store, source string) *drillCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("dbtrail_restore_drill_last_"+name, help, nil, prometheus.Labels{"source": source})
	}
	return &drillCollector{store: store, source: source,
		when: desc("timestamp_seconds", "Start of the last restore drill (Unix seconds)."),
		ok:   desc("ok", "1 when the last restore drill restored and verified every table, 0 when it failed."),
		rows: desc("rows", "Rows the last restore drill restored and verified."),
		took: desc("duration_seconds", "How long the last restore drill took."),
	}
}

func (c *drillCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.when
	ch <- c.ok
	ch <- c.rows
	ch <- c.took
}

func (c *drillCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), drillScrapeTimeout)
	defer cancel()
	d, found, err := c.store.LastDrill(ctx, c.source)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.ok, err)
		return
	}
	if !found {
		return
	}
	ok := 0.0
	if d.Verdict == index.DrillOK {
		ok = 1
	}
	ch <- prometheus.MustNewConstMetric(c.when, prometheus.GaugeValue, float64(d.StartedAt.Unix()))
	ch <- prometheus.MustNewConstMetric(c.ok, prometheus.GaugeValue, ok)
	ch <- prometheus.MustNewConstMetric(c.rows, prometheus.GaugeValue, float64(d.Rows))
	ch <- prometheus.MustNewConstMetric(c.took, prometheus.GaugeValue, d.Took().Seconds())
}
