package api

import (
	"context"
	"net/http"
	"time"
)

// CaptureHistorySpan is how far back GET /v1/capture reaches.
const CaptureHistorySpan = 6 * time.Hour

// CaptureHistory is the answer of GET /v1/capture: capture's state of a
// source sampled over the last CaptureHistorySpan (capture records it in
// the index every 30 s; none while capture does not run), oldest first.
type CaptureHistory struct {
	Source  string          `json:"source"`
	Samples []CaptureSample `json:"samples"`
}

// CaptureSample is capture's state at one time: the lag (the time since
// the last captured commit, absent before the first one) and the seq of
// the last captured event.
type CaptureSample struct {
	At         time.Time `json:"at"`
	LagSeconds *float64  `json:"lag_seconds,omitempty"`
	LastSeq    uint64    `json:"last_seq"`
}

// CaptureHistoryReader is the part of a Catalog that answers GET
// /v1/capture.
type CaptureHistoryReader interface {
	CaptureHistory(ctx context.Context, source string) (CaptureHistory, error)
}

func (s *server) captureHistory(w http.ResponseWriter, r *http.Request, _ any) error {
	cr, ok := s.cfg.Catalog.(CaptureHistoryReader)
	if !ok {
		return &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured, Message: "this server reads no index"}
	}
	src, err := s.source(r)
	if err != nil {
		return err
	}
	h, err := cr.CaptureHistory(r.Context(), src)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}
