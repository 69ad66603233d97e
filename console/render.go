package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/disk"
)

// pages is each page's template set (the layout and the page).
type pages map[string]*template.Template

// pageNames are the page templates, templates/<name>.html each.
var pageNames = []string{"login", "error", "overview", "backups", "snapshot", "jobs", "job", "moment", "confirm", "query"}

// funcs are the templates' functions. None returns template.HTML: every
// value is escaped by html/template where it is written.
var funcs = template.FuncMap{
	"bytes":    func(n int64) string { return disk.Bytes(uint64(max(n, 0))) },
	"ubytes":   disk.Bytes,
	"low":      disk.Low,
	"when":     when,
	"ago":      ago,
	"pretty":   pretty,
	"lag":      lag,
	"add":      func(a, b int) int { return a + b },
	"changed":  changed,
	"until":    func(t time.Time) string { return span(time.Until(t)) },
	"took":     func(a, b time.Time) string { return span(b.Sub(a)) },
	"retries":  retryText,
	"progress": progressLine,
	"dict2":    func(k1 string, v1 any, k2 string, v2 any) map[string]any { return map[string]any{k1: v1, k2: v2} },
}

// parsePages parses every page with the layout.
func parsePages() (pages, error) {
	pg := pages{}
	for _, n := range pageNames {
		t, err := template.New(n).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+n+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", n, err)
		}
		pg[n] = t
	}
	return pg, nil
}

// view is what the layout renders around a page's data.
type view struct {
	Title string
	Nav   string
	// Session is nil on the login page.
	Session *sessionView
	Data    any
}

// sessionView is what a page shows of its session.
type sessionView struct {
	Name  string
	Write bool
	CSRF  string
	// Tokens: the server has tokens (a logout means something).
	Tokens bool
}

// titles are the pages' titles and the nav entry each belongs to.
var titles = map[string][2]string{
	"login": {"Log in", ""}, "error": {"Error", ""}, "overview": {"Overview", "overview"},
	"backups": {"Backups", "backups"}, "snapshot": {"Snapshot", "backups"}, "jobs": {"Jobs", "jobs"},
	"job": {"Job", "jobs"}, "moment": {"A moment", "moment"}, "confirm": {"Confirm", "moment"}, "query": {"Query", "query"},
}

// render writes page name with data, status code. The page is rendered
// into memory first, so a template error answers 500, not half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, s *session, data any) {
	v := view{Title: titles[name][0], Nav: titles[name][1], Data: data}
	if s != nil {
		v.Session = &sessionView{Name: s.name, Write: s.write, CSRF: s.csrf, Tokens: len(c.tokens) > 0}
	}
	var b bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&b, "layout", v); err != nil {
		c.log.Error("console page failed", slog.String("page", name), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
		http.Error(w, "internal error (see the server's log)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes()) // the browser went away: nothing to answer
}

// fail answers err as the error page with its status (an API error's).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	e := asAPIError(err)
	if e.Status >= 500 && e.Code == api.CodeInternal {
		c.log.Error("console request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	}
	c.render(w, r, e.Status, "error", s, e)
}

// when is t as UTC text ("" for the zero time).
func when(t any) string {
	switch v := t.(type) {
	case time.Time:
		if v.IsZero() {
			return ""
		}
		return v.UTC().Format("2006-01-02 15:04:05Z")
	case *time.Time:
		if v == nil {
			return ""
		}
		return when(*v)
	}
	return fmt.Sprint(t)
}

// ago is the age of t in words ("" for the zero time).
func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return span(time.Since(t)) + " ago"
}

// span is d rounded for a person: 42s, 5m10s, 3h05m, 2d04h.
func span(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// lag is a lag in seconds as a span ("" for none).
func lag(sec *float64) string {
	if sec == nil || math.IsNaN(*sec) {
		return ""
	}
	return span(time.Duration(*sec * float64(time.Second)))
}

// pretty is a JSON value indented, for a <pre> ("" for none).
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// changed counts the tables a snapshot wrote anew (some bytes new).
func changed(ts []api.SnapshotTable) int {
	n := 0
	for _, t := range ts {
		if t.NewBytes > 0 {
			n++
		}
	}
	return n
}

// progressLine is a running job's progress (its workflow's progress query)
// in one line: the phase, then the tables, hours and rows done of their
// totals and the ETA, as the workflows' progress types name them ("" for
// none).
func progressLine(raw json.RawMessage) string {
	var p struct {
		Phase                                          string
		TablesTotal, TablesDone, HoursTotal, HoursDone int
		Rows, Total                                    int64
		ETASeconds                                     *int64
	}
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil && p.Phase == "" {
		return ""
	}
	var parts []string
	if p.Phase != "" {
		parts = append(parts, p.Phase)
	}
	if p.TablesTotal > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d tables", p.TablesDone, p.TablesTotal))
	}
	if p.HoursTotal > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d hours", p.HoursDone, p.HoursTotal))
	}
	switch {
	case p.Total > 0:
		parts = append(parts, fmt.Sprintf("%d of %d rows", p.Rows, p.Total))
	case p.Rows > 0:
		parts = append(parts, fmt.Sprintf("%d rows", p.Rows))
	}
	if p.ETASeconds != nil && *p.ETASeconds > 0 {
		parts = append(parts, "ETA "+span(time.Duration(*p.ETASeconds)*time.Second))
	}
	return strings.Join(parts, " · ")
}
