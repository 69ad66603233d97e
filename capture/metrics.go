package capture

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are capture's Prometheus series, labelled by source. Register them
// on the registry the process serves.
type Metrics struct {
	EventsReceived *prometheus.CounterVec
	EventsIndexed  *prometheus.CounterVec
	LastCommit     *prometheus.GaugeVec
	Lag            *prometheus.GaugeVec
	LastCheckpoint *prometheus.GaugeVec
	Errors         *prometheus.CounterVec
}

// NewMetrics creates the series and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		EventsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "dbtrail", Subsystem: "capture", Name: "events_received_total",
			Help: "Row events decoded from the source binlog (one per row image).",
		}, []string{"source"}),
		EventsIndexed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "dbtrail", Subsystem: "capture", Name: "events_indexed_total",
			Help: "Row events committed to the index together with their checkpoint.",
		}, []string{"source"}),
		LastCommit: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "dbtrail", Subsystem: "capture", Name: "last_commit_timestamp_seconds",
			Help: "Source commit time of the newest transaction committed to the index (Unix seconds).",
		}, []string{"source"}),
		Lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "dbtrail", Subsystem: "capture", Name: "lag_seconds",
			Help: "Seconds between now and the source commit time of the newest indexed transaction; 0 when capture has read all the source has written.",
		}, []string{"source"}),
		LastCheckpoint: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "dbtrail", Subsystem: "capture", Name: "last_checkpoint_timestamp_seconds",
			Help: "Wall-clock time of the newest checkpoint written to the index (Unix seconds).",
		}, []string{"source"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "dbtrail", Subsystem: "capture", Name: "errors_total",
			Help: "Errors that stopped or restarted capture, by kind.",
		}, []string{"source", "kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.EventsReceived, m.EventsIndexed, m.LastCommit, m.Lag, m.LastCheckpoint, m.Errors)
	}
	return m
}
