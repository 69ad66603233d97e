package api

import (
	"context"
	"net/http"
	"time"
)

// IndexWindow is the answer of GET /v1/index: what the index holds of a
// source (its hours of events, oldest first, and the window they span),
// the capture gaps it recorded and the source's last restore drill.
type IndexWindow struct {
	Source string      `json:"source"`
	Hours  []IndexHour `json:"hours"`
	// From is the start of the oldest hour with events, To the end of the
	// newest (both absent for an empty index).
	From   *time.Time   `json:"from,omitempty"`
	To     *time.Time   `json:"to,omitempty"`
	Events int64        `json:"events"`
	Gaps   []CaptureGap `json:"gaps"`
	// LastDrill is the newest restore drill (absent: none yet).
	LastDrill *Drill `json:"last_drill,omitempty"`
}

// IndexHour is one hour of events the index holds.
type IndexHour struct {
	Hour     time.Time `json:"hour"`
	Events   int64     `json:"events"`
	FirstSeq uint64    `json:"first_seq"`
	LastSeq  uint64    `json:"last_seq"`
}

// CaptureGap is a stretch of the binlog capture could not read (purged
// before it got there): From and To are file:pos.
type CaptureGap struct {
	From       string    `json:"from"`
	FromGTID   string    `json:"from_gtid,omitempty"`
	To         string    `json:"to"`
	Reason     string    `json:"reason"`
	DetectedAt time.Time `json:"detected_at"`
}

// Drill is a restore drill's record: the moment it restored into a scratch
// server, what it loaded and verified, and its verdict (ok or failed, with
// the failure).
type Drill struct {
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Target     string    `json:"target"`
	Moment     string    `json:"moment"`
	Cut        string    `json:"cut,omitempty"`
	Snapshot   string    `json:"snapshot,omitempty"`
	Tables     int       `json:"tables"`
	Rows       int64     `json:"rows"`
	Verdict    string    `json:"verdict"`
	Failure    string    `json:"failure,omitempty"`
}

// IndexReader is the part of a Catalog that answers GET /v1/index.
type IndexReader interface {
	IndexWindow(ctx context.Context, source string) (IndexWindow, error)
}

func (s *server) indexWindow(w http.ResponseWriter, r *http.Request, _ any) error {
	ir, ok := s.cfg.Catalog.(IndexReader)
	if !ok {
		return &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured, Message: "this server reads no index"}
	}
	src, err := s.source(r)
	if err != nil {
		return err
	}
	iw, err := ir.IndexWindow(r.Context(), src)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, iw)
	return nil
}
