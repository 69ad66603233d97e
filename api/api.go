// Package api is `dbtrail serve`: an HTTP JSON API over dbtrail's jobs, a
// thin layer over the Temporal client (package jobs: each job is a
// workflow, its ID the job ID) plus read-only views of a source's
// snapshots, archives and status, and a sandboxed SQL question over the
// current snapshot.
//
// It lives at the top level beside workers/ and activities/ because it is an
// adapter (HTTP in, Temporal and the index out), not domain logic; cmd only
// wires flags to Config. Every route is in routes(); the OpenAPI document
// (openapi.json, served at /v1/openapi.json) is checked against that table
// by a test. The contract: docs/api.md.
//
// Rules every request goes through: the cross-site rules (guard.go: the
// Host header names this server, an Origin is its own, every POST is
// application/json), a bearer token when tokens are configured (read-only
// tokens may only read), a rate per token or remote address, JSON bodies
// of at most Config.MaxBodyBytes with unknown fields refused, unknown query
// parameters refused, and errors as {"error": {"code", "message", "field"}}.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
)

// DefaultMaxBodyBytes bounds a request body when Config leaves it 0.
const DefaultMaxBodyBytes = 64 << 10

// Jobs is what the API needs of package jobs (*jobs.Service).
type Jobs interface {
	Start(ctx context.Context, req jobs.Request) (jobs.Job, error)
	List(ctx context.Context, f jobs.Filter, pageSize int, token []byte) ([]jobs.Job, []byte, error)
	Get(ctx context.Context, id string) (jobs.Job, error)
	Cancel(ctx context.Context, id string) (jobs.Job, error)
	Last(ctx context.Context, kind jobs.Kind, source string) (jobs.Job, bool, error)
}

// Catalog reads what a source holds: its snapshots, its archived hours and
// its capture state. An error that is an *Error is answered as it says.
type Catalog interface {
	// Snapshots are the source's local and remote snapshots, newest
	// first; Archives its archived hours.
	Snapshots(ctx context.Context, source string) ([]SnapshotEntry, error)
	Archives(ctx context.Context, source string) ([]ArchivedHour, error)
	// Capture is the capture's checkpoint, lag and index size (nil:
	// absent, as without an index).
	Capture(ctx context.Context, source string) (*CaptureStatus, error)
	// Folders is the free space of every worker's folders as they last
	// measured it (none: absent).
	Folders(ctx context.Context) ([]FolderSpace, error)
}

// Config is what the API serves.
type Config struct {
	Jobs Jobs
	// Catalog answers /v1/snapshots, /v1/archives and the capture part of
	// /v1/status; nil answers them 501 not_configured.
	Catalog Catalog
	// RetentionPreview answers the next_retention part of /v1/status:
	// what the next retention run of a source would remove (nil: absent;
	// a nil answer: absent too).
	RetentionPreview func(ctx context.Context, source string) (any, error)
	// Query answers /v1/query in the sandbox; nil answers 501.
	Query QueryFunc
	// History answers /v1/history from the index (and the archives);
	// nil answers 501.
	History HistoryFunc
	// Tokens are the accepted bearer tokens; none: every request is let
	// in (Listen refuses that on anything but loopback).
	Tokens []Token
	// Source is the source of a request that names none.
	Source string
	// ExportDir is the folder (on the workers' machines) exports are written
	// into: a request names a file or folder inside it. "": exports refused.
	ExportDir string
	// Refresh is the refresh settings of a requested refresh (those of the
	// worker's schedule), for source.
	Refresh func(source string) payload.RefreshInput
	// MaxBodyBytes bounds request bodies (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Addr is the address the server listens on (the listener's own,
	// host:port): the Host header must name it (required).
	Addr string
	// Hosts are the other names the server is reached at (a reverse
	// proxy's): "NAME" (any port) or "NAME:PORT".
	Hosts []string
	// TLS: the server answers HTTPS (its own origin is https://).
	TLS bool
	// Rate is the requests per second of one token (without tokens, of
	// one remote address), burst twice that; 0: no limit.
	Rate float64
	// Now is the rate limit's clock (default time.Now).
	Now func() time.Time
	Log *slog.Logger
	// UI answers every path outside /v1/ (the console, package console),
	// behind the same cross-site rules (Host, Origin, Sec-Fetch-Site);
	// nil: those paths answer 404 not_found.
	UI http.Handler
}

// route is one method on one path.
type route struct {
	method, path string
	// write: only read-write tokens may call it.
	write bool
	// params are the query parameters it takes (others are refused).
	params []string
	// body is a pointer to a new request body, or nil for none.
	body   func() any
	handle func(s *server, w http.ResponseWriter, r *http.Request, body any) error
}

// routes is every route of the API (the OpenAPI document lists the same).
func routes() []route {
	return []route{
		{method: "GET", path: "/v1/openapi.json", handle: (*server).openAPI},
		{method: "POST", path: "/v1/backups", write: true, body: func() any { return new(BackupRequest) }, handle: (*server).startBackup},
		{method: "POST", path: "/v1/refreshes", write: true, body: func() any { return new(RefreshRequest) }, handle: (*server).startRefresh},
		{method: "POST", path: "/v1/exports", write: true, body: func() any { return new(ExportRequest) }, handle: (*server).startExport},
		{method: "POST", path: "/v1/verifies", write: true, body: func() any { return new(VerifyRequest) }, handle: (*server).startVerify},
		{method: "POST", path: "/v1/restores", write: true, body: func() any { return new(RestoreRequest) }, handle: (*server).startRestore},
		{method: "GET", path: "/v1/jobs", params: []string{"kind", "state", "label", "source", "limit", "page_token"}, handle: (*server).listJobs},
		{method: "GET", path: "/v1/jobs/{id}", handle: (*server).getJob},
		{method: "POST", path: "/v1/jobs/{id}/cancel", write: true, handle: (*server).cancelJob},
		{method: "GET", path: "/v1/snapshots", params: []string{"source"}, handle: (*server).snapshots},
		{method: "GET", path: "/v1/snapshots/{id}/manifest", params: []string{"source"}, handle: (*server).manifest},
		{method: "GET", path: "/v1/snapshots/{id}/check", params: []string{"source", "table"}, handle: (*server).checkFiles},
		{method: "GET", path: "/v1/archives", params: []string{"source"}, handle: (*server).archives},
		{method: "GET", path: "/v1/status", params: []string{"source"}, handle: (*server).status},
		{method: "GET", path: "/v1/schedules", params: []string{"source"}, handle: (*server).schedules},
		{method: "GET", path: "/v1/index", params: []string{"source"}, handle: (*server).indexWindow},
		{method: "GET", path: "/v1/capture", params: []string{"source"}, handle: (*server).captureHistory},
		{method: "GET", path: "/v1/history", params: []string{"source", "table", "key", "limit"}, handle: (*server).history},
		{method: "POST", path: "/v1/query", params: []string{"snapshot", "tail", "at"}, body: func() any { return new(QueryRequest) }, handle: (*server).query},
	}
}

type server struct {
	cfg     Config
	log     *slog.Logger
	hosts   hosts
	limiter *limiter
}

// New returns the API's handler.
func New(cfg Config) (http.Handler, error) {
	if cfg.Jobs == nil {
		return nil, errors.New("api: Config.Jobs is required")
	}
	if cfg.Source == "" {
		cfg.Source = "main"
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Refresh == nil {
		cfg.Refresh = func(source string) payload.RefreshInput {
			return payload.RefreshInput{Source: source, TableDeltas: true}
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h, err := newHosts(cfg.Addr, cfg.Hosts, cfg.TLS)
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, log: cfg.Log, hosts: h, limiter: newLimiter(cfg.Rate, cfg.Now)}
	byPath := map[string][]route{}
	var order []string
	for _, rt := range routes() {
		if _, ok := byPath[rt.path]; !ok {
			order = append(order, rt.path)
		}
		byPath[rt.path] = append(byPath[rt.path], rt)
	}
	mux := http.NewServeMux()
	for _, p := range order {
		mux.Handle(p, s.dispatch(byPath[p]))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if cfg.UI != nil && r.URL.Path != "/v1" && !strings.HasPrefix(r.URL.Path, "/v1/") {
			cfg.UI.ServeHTTP(w, r)
			return
		}
		writeError(w, r, s.log, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no such route: " + r.URL.Path})
	})
	return s.guard(mux), nil
}

// dispatch picks the route of r's method among rts (405 otherwise) and
// runs it through authentication, the parameter and body checks.
func (s *server) dispatch(rts []route) http.Handler {
	var allow []string
	for _, rt := range rts {
		allow = append(allow, rt.method)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		rw := &statusWriter{ResponseWriter: w}
		who, err := s.serve(rw, r, rts, allow)
		if err != nil {
			writeError(rw, r, s.log, err)
		}
		s.log.Info("request", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rw.status),
			slog.String("token", who), slog.Duration("took", time.Since(began).Round(time.Millisecond)))
	})
}

// serve runs one request; it returns the token name (for the log) and the
// error to answer, if any.
func (s *server) serve(w http.ResponseWriter, r *http.Request, rts []route, allow []string) (string, error) {
	i := slices.IndexFunc(rts, func(rt route) bool { return rt.method == r.Method })
	if i < 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return "", &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
			Message: fmt.Sprintf("%s %s: allowed %s", r.Method, r.URL.Path, strings.Join(allow, ", "))}
	}
	rt := rts[i]
	if rt.method != http.MethodGet {
		if e := requireJSON(r); e != nil {
			return "none", e
		}
	}
	who := "none"
	if len(s.cfg.Tokens) > 0 && rt.path != "/v1/openapi.json" {
		tok, e := authenticate(s.cfg.Tokens, r)
		if e != nil {
			if limited := s.limit(w, r, ""); limited != nil {
				return who, limited
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="dbtrail"`)
			return who, e
		}
		who = tok.Name
		if rt.write && !tok.Write {
			return who, &Error{Status: http.StatusForbidden, Code: CodeForbidden,
				Message: fmt.Sprintf("token %s is read-only: %s %s needs a read-write token", tok.Name, rt.method, rt.path)}
		}
	}
	key := ""
	if who != "none" {
		key = who
	}
	if e := s.limit(w, r, key); e != nil {
		return who, e
	}
	for name := range r.URL.Query() {
		if !slices.Contains(rt.params, name) {
			return who, &Error{Status: http.StatusBadRequest, Code: CodeUnknownField, Field: name,
				Message: fmt.Sprintf("unknown query parameter %q", name)}
		}
	}
	var body any
	if rt.body != nil {
		body = rt.body()
		if err := s.decode(w, r, body); err != nil {
			return who, err
		}
	}
	return who, rt.handle(s, w, r, body)
}

// decode reads r's JSON body (its type checked by requireJSON) into v: at
// most MaxBodyBytes, one JSON object, no unknown field. An empty body is an
// empty object.
func (s *server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err == nil {
		if _, extra := dec.Token(); !errors.Is(extra, io.EOF) {
			err = errors.New("the body holds more than one JSON value")
		}
	}
	return bodyError(err, s.cfg.MaxBodyBytes)
}

// bodyError maps a body decoding error to its answer (nil for nil).
func bodyError(err error, limit int64) error {
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	var syntax *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooBig):
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge,
			Message: fmt.Sprintf("the request body is larger than %d bytes", limit)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &Error{Status: http.StatusBadRequest, Code: CodeUnknownField, Field: name, Message: fmt.Sprintf("unknown field %q", name)}
	case errors.As(err, &typeErr):
		return badFieldf(typeErr.Field, "field %q: want a JSON %s, got %s", typeErr.Field, typeErr.Type.Kind(), typeErr.Value)
	case errors.As(err, &syntax):
		return badFieldf("", "the body is not valid JSON at byte %d: %v", syntax.Offset, err)
	}
	return badField("", fmt.Errorf("the body: %w", err))
}

// statusWriter remembers the status written, for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
