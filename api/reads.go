package api

import (
	"context"
	_ "embed"
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/dbtrail/dbtrail/jobs"
)

// openapiDoc is the OpenAPI 3 document of the routes.
//
//go:embed openapi.json
var openapiDoc []byte

// DefaultPageSize is the page size of GET /v1/jobs without limit.
const DefaultPageSize = 50

func (s *server) openAPI(w http.ResponseWriter, _ *http.Request, _ any) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openapiDoc)
	return err
}

// JobList is the answer of GET /v1/jobs.
type JobList struct {
	Jobs []jobs.Job `json:"jobs"`
	// NextPageToken fetches the next page (page_token); absent on the last.
	NextPageToken string `json:"next_page_token,omitempty"`
}

func (s *server) listJobs(w http.ResponseWriter, r *http.Request, _ any) error {
	q := r.URL.Query()
	var f jobs.Filter
	var err error
	if v := q.Get("kind"); v != "" {
		if f.Kind, err = jobs.ParseKind(v); err != nil {
			return badField("kind", err)
		}
	}
	if v := q.Get("state"); v != "" {
		if f.State, err = jobs.ParseState(v); err != nil {
			return badField("state", err)
		}
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"label", &f.Label}, {"source", &f.Source}} {
		if v := q.Get(p.name); v != "" {
			if err := jobs.CheckName(p.name, v); err != nil {
				return badField(p.name, err)
			}
			*p.dst = v
		}
	}
	size := DefaultPageSize
	if v := q.Get("limit"); v != "" {
		if size, err = strconv.Atoi(v); err != nil || size < 1 || size > jobs.MaxPageSize {
			return badFieldf("limit", "limit %q: want 1 to %d", v, jobs.MaxPageSize)
		}
	}
	var token []byte
	if v := q.Get("page_token"); v != "" {
		if token, err = base64.RawURLEncoding.DecodeString(v); err != nil {
			return badFieldf("page_token", "page_token: not a token this API gave")
		}
	}
	list, next, err := s.cfg.Jobs.List(r.Context(), f, size, token)
	if err != nil {
		return err
	}
	out := JobList{Jobs: list}
	if len(next) > 0 {
		out.NextPageToken = base64.RawURLEncoding.EncodeToString(next)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *server) getJob(w http.ResponseWriter, r *http.Request, _ any) error {
	j, err := s.cfg.Jobs.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

func (s *server) cancelJob(w http.ResponseWriter, r *http.Request, _ any) error {
	j, err := s.cfg.Jobs.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	j.State = "cancel_requested"
	writeJSON(w, http.StatusAccepted, j)
	return nil
}

// source returns the request's source parameter, or the configured one.
func (s *server) source(r *http.Request) (string, error) {
	src := r.URL.Query().Get("source")
	if src == "" {
		return s.cfg.Source, nil
	}
	if err := jobs.CheckName("source", src); err != nil {
		return "", badField("source", err)
	}
	return src, nil
}

// catalogRead answers a Catalog read of the request's source.
func catalogRead[T any](s *server, w http.ResponseWriter, r *http.Request, read func(Catalog, context.Context, string) (T, error)) error {
	if s.cfg.Catalog == nil {
		return &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured, Message: "this server reads no index or backup folder"}
	}
	src, err := s.source(r)
	if err != nil {
		return err
	}
	v, err := read(s.cfg.Catalog, r.Context(), src)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *server) snapshots(w http.ResponseWriter, r *http.Request, _ any) error {
	return catalogRead(s, w, r, Catalog.Snapshots)
}

func (s *server) archives(w http.ResponseWriter, r *http.Request, _ any) error {
	return catalogRead(s, w, r, Catalog.Archives)
}

// Status is the answer of GET /v1/status.
type Status struct {
	Source string `json:"source"`
	// Capture is the capture checkpoint, lag and index size (absent
	// without a Catalog).
	Capture *CaptureStatus `json:"capture,omitempty"`
	// Folders is the free space of the workers' backup, work and dump
	// folders as each worker last measured it (absent without a Catalog's
	// index, or before any worker measured).
	Folders []FolderSpace `json:"folders,omitempty"`
	// LastRefresh, LastVerify and LastRetention are the newest finished job
	// of each kind, with its result (the verify verdicts, what retention
	// removed) or error.
	LastRefresh   *jobs.Job `json:"last_refresh,omitempty"`
	LastVerify    *jobs.Job `json:"last_verify,omitempty"`
	LastRetention *jobs.Job `json:"last_retention,omitempty"`
	// NextRetention is what the next run of the source's retention
	// schedule would remove, planned now by a worker (absent without a
	// schedule or without Config.RetentionPreview).
	NextRetention any `json:"next_retention,omitempty"`
}

func (s *server) status(w http.ResponseWriter, r *http.Request, _ any) error {
	src, err := s.source(r)
	if err != nil {
		return err
	}
	st := Status{Source: src}
	if s.cfg.Catalog != nil {
		if st.Capture, err = s.cfg.Catalog.Capture(r.Context(), src); err != nil {
			return err
		}
		if st.Folders, err = s.cfg.Catalog.Folders(r.Context()); err != nil {
			return err
		}
	}
	for _, l := range []struct {
		kind jobs.Kind
		dst  **jobs.Job
	}{{jobs.Refresh, &st.LastRefresh}, {jobs.Verify, &st.LastVerify}, {jobs.Retention, &st.LastRetention}} {
		j, ok, err := s.cfg.Jobs.Last(r.Context(), l.kind, src)
		if err != nil {
			return err
		}
		if ok {
			*l.dst = &j
		}
	}
	if s.cfg.RetentionPreview != nil {
		if st.NextRetention, err = s.cfg.RetentionPreview(r.Context(), src); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// ManifestReader is the part of a Catalog that answers GET
// /v1/snapshots/{id}/manifest: the manifest.json of a published snapshot
// of source as it is on disk. A snapshot the source does not have is a
// 404 *Error.
type ManifestReader interface {
	Manifest(ctx context.Context, source, id string) ([]byte, error)
}

func (s *server) manifest(w http.ResponseWriter, r *http.Request, _ any) error {
	m, ok := s.cfg.Catalog.(ManifestReader)
	src, id, err := s.snapshotOf(r, ok)
	if err != nil {
		return err
	}
	b, err := m.Manifest(r.Context(), src, id)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(b)
	return err
}

// FileChecker is the part of a Catalog that answers GET
// /v1/snapshots/{id}/check?table=: it reads each file of the table in
// snapshot id of source (its table file and chain) and compares its size
// and sha256 with the manifest's. A snapshot or table it does not have is
// a 404 *Error.
type FileChecker interface {
	CheckFiles(ctx context.Context, source, id, table string) (FileChecks, error)
}

func (s *server) checkFiles(w http.ResponseWriter, r *http.Request, _ any) error {
	fc, ok := s.cfg.Catalog.(FileChecker)
	src, id, err := s.snapshotOf(r, ok)
	if err != nil {
		return err
	}
	table := r.URL.Query().Get("table")
	if table == "" {
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Field: "table", Message: "name the table whose files to check, as schema.table"}
	}
	out, err := fc.CheckFiles(r.Context(), src, id, table)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// snapshotOf is the source and the snapshot id of a request to
// /v1/snapshots/{id}/…, read when served (the Catalog reads a backup
// folder): a 501 when not, a 400 on a bad source or id.
func (s *server) snapshotOf(r *http.Request, served bool) (string, string, error) {
	if !served {
		return "", "", &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured, Message: "this server reads no backup folder"}
	}
	src, err := s.source(r)
	if err != nil {
		return "", "", err
	}
	id := r.PathValue("id")
	if err := jobs.CheckName("snapshot", id); err != nil {
		return "", "", badField("id", err)
	}
	return src, id, nil
}
