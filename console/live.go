package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

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
	// LagPlot and RatePlot are the overview's plots of capture's lag and
	// events/s, drawn anew (the "lagplot" and "rateplot" templates; ""
	// without samples: the page keeps what it has).
	LagPlot  string `json:"lag_plot,omitempty"`
	RatePlot string `json:"rate_plot,omitempty"`
}

// overviewLiveJSON is GET /live?source=: capture's lag, the running jobs'
// count and the lag and events/s plots, from the API's status, job list
// and capture samples.
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
	lagP, rateP, err := c.capturePlots(r, s, src)
	if err != nil {
		return err
	}
	if lagP.Samples > 0 {
		if out.LagPlot, err = c.fragment("lagplot", lagP); err == nil {
			out.RatePlot, err = c.fragment("rateplot", rateP)
		}
		if err != nil {
			return err
		}
	}
	return writeLive(w, out)
}

// capturePlots draws capture's lag and events/s from the API's samples of
// the source (none when the server reads no index).
func (c *Console) capturePlots(r *http.Request, s *session, src url.Values) (lag, rate plot, err error) {
	var hist api.CaptureHistory
	switch err := c.call(r, s, "GET", "/v1/capture", src, nil, &hist); {
	case notConfigured(err):
		return plot{}, plot{}, nil
	case err != nil:
		return plot{}, plot{}, err
	}
	lag, rate = lagPlots(lagSamplesOf(hist))
	return lag, rate, nil
}

// fragment renders the overview's template name with data, for a live
// update to put in the page.
func (c *Console) fragment(name string, data any) (string, error) {
	var b strings.Builder
	if err := c.pages["overview"].ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("console: render %s: %w", name, err)
	}
	return b.String(), nil
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
