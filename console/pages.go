package console

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/jobs"
)

// status is GET /v1/status decoded with the catalog's answer types.
type status struct {
	Source        string             `json:"source"`
	Capture       *api.CaptureStatus `json:"capture"`
	Folders       []api.FolderSpace  `json:"folders"`
	LastRefresh   *jobs.Job          `json:"last_refresh"`
	LastVerify    *jobs.Job          `json:"last_verify"`
	LastRetention *jobs.Job          `json:"last_retention"`
	NextRetention json.RawMessage    `json:"next_retention"`
}

// sourceOf is the page's ?source, or the server's.
func (c *Console) sourceOf(r *http.Request) string {
	if s := r.URL.Query().Get("source"); s != "" {
		return s
	}
	return c.source
}

// overviewView is the overview page.
type overviewView struct {
	Status    status
	Newest    *api.SnapshotEntry
	Snapshots int
	// SnapshotsOff/ArchivesOff say why a part is missing (the server
	// reads no backup folder or no index).
	SnapshotsOff, ArchivesOff string
	Archives                  []api.ArchivedHour
	Timeline                  timeline
	Running                   []jobs.Job
	Last                      []lastRun
	// Lag and Rate plot capture's lag and events/s (this process's
	// samples of the server's source; none for another source).
	Lag, Rate plot
	// Schedules are the source's schedules (SchedulesOff: why none).
	Schedules    []jobs.ScheduleState
	SchedulesOff string
	// Index is what the index holds, its gaps and the last drill
	// (IndexOff: why none).
	Index    *api.IndexWindow
	IndexOff string
}

// lastRun is the newest finished job of one kind (Job nil: none).
type lastRun struct {
	Name string
	Job  *jobs.Job
}

// overview is GET /: the source's capture, newest snapshot, archive
// timeline, folders and running jobs, each read from the API.
func (c *Console) overview(w http.ResponseWriter, r *http.Request, s *session) error {
	src := url.Values{"source": {c.sourceOf(r)}}
	var v overviewView
	if err := c.call(r, s, "GET", "/v1/status", src, nil, &v.Status); err != nil {
		return err
	}
	var snaps []api.SnapshotEntry
	switch err := c.call(r, s, "GET", "/v1/snapshots", src, nil, &snaps); {
	case notConfigured(err):
		v.SnapshotsOff = err.Error()
	case err != nil:
		return err
	}
	v.Snapshots = len(snaps)
	if len(snaps) > 0 {
		v.Newest = &snaps[len(snaps)-1]
	}
	switch err := c.call(r, s, "GET", "/v1/archives", src, nil, &v.Archives); {
	case notConfigured(err):
		v.ArchivesOff = err.Error()
	case err != nil:
		return err
	}
	v.Timeline = newTimeline(v.Archives)
	if err := c.scheduleAndIndex(r, s, src, &v); err != nil {
		return err
	}
	var err error
	if v.Lag, v.Rate, err = c.capturePlots(r, s, src); err != nil {
		return err
	}
	v.Last = []lastRun{{"Refresh", v.Status.LastRefresh}, {"Verify", v.Status.LastVerify}, {"Retention", v.Status.LastRetention}}
	var running api.JobList
	if err := c.call(r, s, "GET", "/v1/jobs", url.Values{"state": {string(jobs.Running)}, "source": src["source"]}, nil, &running); err != nil {
		return err
	}
	v.Running = running.Jobs
	for i, j := range v.Running { // the list has no steps retried: each job's own answer has
		var full jobs.Job
		if err := c.call(r, s, "GET", "/v1/jobs/"+url.PathEscape(j.ID), nil, nil, &full); err == nil {
			v.Running[i] = full
		}
	}
	c.render(w, r, http.StatusOK, "overview", s, v)
	return nil
}

// scheduleAndIndex reads the source's schedules and index window into v;
// a part the server does not have (501) is said, not an error.
func (c *Console) scheduleAndIndex(r *http.Request, s *session, src url.Values, v *overviewView) error {
	switch err := c.call(r, s, "GET", "/v1/schedules", src, nil, &v.Schedules); {
	case notConfigured(err):
		v.SchedulesOff = err.Error()
	case err != nil:
		return err
	}
	var iw api.IndexWindow
	switch err := c.call(r, s, "GET", "/v1/index", src, nil, &iw); {
	case notConfigured(err):
		v.IndexOff = err.Error()
	case err != nil:
		return err
	default:
		v.Index = &iw
		v.Timeline.markCapture(iw.Gaps)
	}
	return nil
}

// backups is GET /backups: the source's snapshots, newest first.
func (c *Console) backups(w http.ResponseWriter, r *http.Request, s *session) error {
	var snaps []api.SnapshotEntry
	if err := c.call(r, s, "GET", "/v1/snapshots", url.Values{"source": {c.sourceOf(r)}}, nil, &snaps); err != nil {
		return err
	}
	slices.Reverse(snaps)
	c.render(w, r, http.StatusOK, "backups", s, snaps)
	return nil
}

// snapshotView is a snapshot's detail page.
type snapshotView struct {
	Source   string
	Snapshot api.SnapshotEntry
	// Files are each table's files from the manifest (FilesOff: why
	// none).
	Files    []tableFiles
	FilesOff string
}

// snapshot is GET /backups/{id}: one snapshot's tables.
func (c *Console) snapshot(w http.ResponseWriter, r *http.Request, s *session) error {
	src := c.sourceOf(r)
	var snaps []api.SnapshotEntry
	if err := c.call(r, s, "GET", "/v1/snapshots", url.Values{"source": {src}}, nil, &snaps); err != nil {
		return err
	}
	id := r.PathValue("id")
	i := slices.IndexFunc(snaps, func(e api.SnapshotEntry) bool { return e.ID == id })
	if i < 0 {
		return &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Message: "source " + src + " has no snapshot " + id}
	}
	v := snapshotView{Source: src, Snapshot: snaps[i]}
	var err error
	if v.Files, v.FilesOff, err = c.manifestFiles(r, s, src, id); err != nil {
		return err
	}
	if err := c.fileAges(r, s, src, snaps, i, v.Files); err != nil {
		return err
	}
	if err := c.checkFiles(r, s, src, id, r.URL.Query().Get("check"), v.Files); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "snapshot", s, v)
	return nil
}

// manifest is GET /backups/{id}/manifest: the snapshot's manifest.json
// (the API's GET /v1/snapshots/{id}/manifest), as a download.
func (c *Console) manifest(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	var m json.RawMessage
	if err := c.call(r, s, "GET", "/v1/snapshots/"+url.PathEscape(id)+"/manifest", url.Values{"source": {c.sourceOf(r)}}, nil, &m); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": id + "-manifest.json"}))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(m) // the browser went away: nothing to answer
	return nil
}

// jobsView is the jobs page: the filters, the page of jobs and the next
// page's token.
type jobsView struct {
	Kind, State, Label, Source string
	Kinds                      []jobs.Kind
	States                     []jobs.State
	Jobs                       []jobs.Job
	Next                       string
}

// jobList is GET /jobs: jobs filtered by kind, state and label (the API
// checks the filters), newest first, a page at a time.
func (c *Console) jobList(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	v := jobsView{Kind: q.Get("kind"), State: q.Get("state"), Label: q.Get("label"), Source: q.Get("source"),
		Kinds: jobs.Kinds(), States: jobs.States()}
	params := url.Values{}
	for _, p := range []string{"kind", "state", "label", "source", "page_token"} {
		if x := q.Get(p); x != "" {
			params.Set(p, x)
		}
	}
	var list api.JobList
	if err := c.call(r, s, "GET", "/v1/jobs", params, nil, &list); err != nil {
		return err
	}
	v.Jobs = list.Jobs
	if list.NextPageToken != "" {
		params.Set("page_token", list.NextPageToken)
		v.Next = "/jobs?" + params.Encode()
	}
	c.render(w, r, http.StatusOK, "jobs", s, v)
	return nil
}

// jobView is a job's page: the job, and a message after a cancel.
type jobView struct {
	Job      jobs.Job
	Canceled bool
	// Restored is a completed restore's tables, each loaded and verified
	// (nil for another job).
	Restored *restored
}

// restored is the part of a completed restore's result the page shows
// (workflows.RestoreResult): every table it loaded, its rows and its
// fingerprint, which the restore compared with the rebuilt table's
// before it completed (a mismatch fails the restore).
type restored struct {
	TargetAddr string
	Rows       int64
	Tables     []struct {
		Table, Target string
		Rows, Written int64
		Fingerprint   string
	}
}

// restoredOf decodes j's result when j is a completed restore (nil
// otherwise, or when the result is not one).
func restoredOf(j jobs.Job) *restored {
	if j.Kind != jobs.Restore || j.State != jobs.Completed || len(j.Result) == 0 {
		return nil
	}
	var r restored
	if err := json.Unmarshal(j.Result, &r); err != nil || len(r.Tables) == 0 {
		return nil
	}
	return &r
}

// job is GET /jobs/{id}: the job's state, progress, retries, result or
// error, and its run in the Temporal UI.
func (c *Console) job(w http.ResponseWriter, r *http.Request, s *session) error {
	var j jobs.Job
	if err := c.call(r, s, "GET", "/v1/jobs/"+url.PathEscape(r.PathValue("id")), nil, nil, &j); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "job", s, jobView{Job: j, Canceled: r.URL.Query().Get("canceled") == "1", Restored: restoredOf(j)})
	return nil
}

// jobLive is the answer of GET /jobs/{id}/live: what a running job's
// page updates (console.js polls it).
type jobLive struct {
	State    jobs.State `json:"state"`
	Progress string     `json:"progress,omitempty"`
	Retrying string     `json:"retrying,omitempty"`
}

// live is GET /jobs/{id}/live: the job's state, progress and retries as
// JSON text (the page writes them with textContent: no markup).
func (c *Console) live(w http.ResponseWriter, r *http.Request, s *session) error {
	var j jobs.Job
	if err := c.call(r, s, "GET", "/v1/jobs/"+url.PathEscape(r.PathValue("id")), nil, nil, &j); err != nil {
		return err
	}
	return writeLive(w, jobLive{State: j.State, Progress: pretty(j.Progress), Retrying: retryText(j.Retrying)})
}

// retryText is a job's retries, one line each.
func retryText(rs []jobs.Retry) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s", r.Step)
		if r.Table != "" {
			fmt.Fprintf(&b, " (%s)", r.Table)
		}
		fmt.Fprintf(&b, ": attempt %d, cause: %s\n", r.Attempt, r.Cause)
	}
	return b.String()
}

// cancel is POST /jobs/{id}/cancel: the API's cancel, then the job's page.
func (c *Console) cancel(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	if err := c.call(r, s, "POST", "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/jobs/"+url.PathEscape(id)+"?canceled=1", http.StatusSeeOther)
	return nil
}
