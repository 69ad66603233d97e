package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/jobs"
)

// overviewLive is the answer of GET /live: what the overview updates
// without a reload (console.js polls it every 10 s).
type overviewLive struct {
	// Lag is capture's lag in words ("" before the first commit).
	Lag        string `json:"lag"`
	LastCommit string `json:"last_commit"`
	// Running is how many jobs of the source run.
	Running int `json:"running"`
}

// overviewLiveJSON is GET /live?source=: capture's lag and the running
// jobs' count, from the API's status and job list.
func (c *Console) overviewLiveJSON(w http.ResponseWriter, r *http.Request, s *session) error {
	src := url.Values{"source": {c.sourceOf(r)}}
	var st status
	if err := c.call(r, s, "GET", "/v1/status", src, nil, &st); err != nil {
		return err
	}
	var out overviewLive
	if st.Capture != nil {
		out.Lag = lag(st.Capture.LagSeconds)
		if st.Capture.Checkpoint != nil {
			out.LastCommit = when(st.Capture.Checkpoint.LastCommit)
		}
	}
	var running api.JobList
	if err := c.call(r, s, "GET", "/v1/jobs", url.Values{"state": {string(jobs.Running)}, "source": src["source"]}, nil, &running); err != nil {
		return err
	}
	out.Running = len(running.Jobs)
	return writeLive(w, out)
}

// writeLive answers v as the JSON of a live update.
func writeLive(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("console: encode a live update: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b) // the browser went away: nothing to answer
	return nil
}
