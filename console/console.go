// Package console is dbtrail's console in the browser: server-rendered
// pages (html/template, everything embedded) that `dbtrail serve` and
// `dbtrail dev` answer at / on the HTTP API's address, with the API's
// tokens. It is a client of the API in the same process: every page reads
// what it shows by calling the API's own handler (package api) with the
// session's token, so a read-only token sees what the API lets it read and
// its starts and cancels are refused by the API as they are over HTTP.
//
// Sessions (session.go): a login form takes a token, checked against the
// API's tokens; the session cookie is HttpOnly, SameSite=Strict and, under
// TLS, Secure (named __Host-…). Every POST carries the session's CSRF
// token. Without tokens (loopback, --no-auth) every visitor gets a session
// of its own without a login, still with a CSRF token. The API's
// cross-site rules (Host, Origin, Sec-Fetch-Site) guard the console's
// paths too. The contract: docs/console.md.
package console

import (
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Console serves the console's pages.
type Console struct {
	api     http.Handler
	tokens  []api.Token
	addr    string
	tls     bool
	source  string
	exports bool
	// exportDir is the API's export folder ("": exports off).
	exportDir string
	log       *slog.Logger
	sessions  *sessions
	pages     pages
	// handler is the API's handler with the console's pages.
	handler http.Handler
}

// ServeHTTP answers the API and the console.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) { c.handler.ServeHTTP(w, r) }

// New returns the handler of the API of cfg with the console answering
// every path outside /v1/ (cfg.UI is set to it).
func New(cfg api.Config) (*Console, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Source == "" {
		cfg.Source = "main"
	}
	pg, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{tokens: cfg.Tokens, addr: cfg.Addr, tls: cfg.TLS, source: cfg.Source, exports: cfg.ExportDir != "", exportDir: cfg.ExportDir,
		log: cfg.Log, sessions: newSessions(time.Now), pages: pg}
	cfg.UI = c.routes()
	h, err := api.New(cfg)
	if err != nil {
		return nil, err
	}
	c.api, c.handler = h, h
	return c, nil
}

// routes is every path of the console.
func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded folder is there: a build without it does not compile
	}
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticFiles(static)))
	mux.HandleFunc("GET /login", c.loginPage)
	mux.HandleFunc("POST /login", c.login)
	mux.Handle("POST /logout", c.post(false, c.logout))
	mux.Handle("GET /{$}", c.get(c.overview))
	mux.Handle("GET /live", c.get(c.overviewLiveJSON))
	mux.Handle("GET /backups", c.get(c.backups))
	mux.Handle("GET /backups/{id}", c.get(c.snapshot))
	mux.Handle("GET /backups/{id}/manifest", c.get(c.manifest))
	mux.Handle("GET /jobs", c.get(c.jobList))
	mux.Handle("GET /jobs/{id}", c.get(c.job))
	mux.Handle("GET /jobs/{id}/live", c.get(c.live))
	mux.Handle("POST /jobs/{id}/cancel", c.post(true, c.cancel))
	mux.Handle("GET /moment", c.get(c.moment))
	mux.Handle("POST /moment/confirm", c.post(true, c.confirm))
	mux.Handle("POST /moment/start", c.post(true, c.startMoment))
	mux.Handle("GET /query", c.get(c.queryPage))
	mux.Handle("POST /query", c.post(false, c.query))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Message: "no such page: " + r.URL.Path})
	})
	return securityHeaders(mux)
}

// staticFiles serves the embedded static files, cached for an hour.
func staticFiles(fsys fs.FS) http.Handler {
	h := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// securityHeaders sets the headers every console answer carries: no
// framing, no sniffing, scripts and styles of this origin only, no
// referrer leaving the page.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin") // not no-referrer: with it a browser sends "Origin: null" on a form post, which the cross-site rules refuse
		next.ServeHTTP(w, r)
	})
}

// asAPIError is err as the API's error answer (a status 500 for an error
// that is not one).
func asAPIError(err error) *api.Error {
	var e *api.Error
	if errors.As(err, &e) {
		return e
	}
	return &api.Error{Status: http.StatusInternalServerError, Code: api.CodeInternal, Message: "internal error (see the server's log)"}
}
