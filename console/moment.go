package console

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/jobs"
)

// firstRows is how many rows a table's first rows show.
const firstRows = 20

// momentView is the moment page: the snapshots to pick from, the picked
// one's tables, a table's first rows and the start forms.
type momentView struct {
	Source    string
	Snapshots []api.SnapshotEntry
	Picked    *api.SnapshotEntry
	// At is the moment the start forms name: the form's, else the picked
	// snapshot's cut.
	At    string
	Table string
	Rows  *queryResult
	// Key is the row key whose history is asked (of Table); History its
	// answer.
	Key     string
	History *historyView
	Exports bool
	// Coverage is the archive, index and snapshot coverage drawn under
	// the picker.
	Coverage coverage
	// Moment is the tables at At when At is not the picked snapshot's cut
	// (a moment between snapshots): read through the API at that moment.
	Moment *momentTables
}

// momentTables are the tables at a moment: its cut, their names
// (schema.table), or why the moment cannot be answered.
type momentTables struct {
	Cut    string
	Tables []string
	Error  string
}

// tablesAtSQL lists the views of a session (the tables at its cut).
const tablesAtSQL = "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal ORDER BY schema_name, view_name"

// maxMomentTables bounds the tables a moment lists.
const maxMomentTables = 10000

// moment is GET /moment: pick a snapshot (the moments the console can show
// rows of), see its tables and a table's first rows at its cut, and start
// an export or a restore of a moment.
func (c *Console) moment(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	v := momentView{Source: c.sourceOf(r), At: strings.TrimSpace(q.Get("at")), Table: q.Get("table"), Key: strings.TrimSpace(q.Get("key")), Exports: c.exports}
	src := url.Values{"source": {v.Source}}
	if err := c.call(r, s, "GET", "/v1/snapshots", src, nil, &v.Snapshots); err != nil {
		return err
	}
	var hours []api.ArchivedHour
	if err := c.call(r, s, "GET", "/v1/archives", src, nil, &hours); err != nil && !notConfigured(err) {
		return err
	}
	var iw api.IndexWindow
	if err := c.call(r, s, "GET", "/v1/index", src, nil, &iw); err != nil && !notConfigured(err) {
		return err
	}
	v.Coverage = newCoverage(hours, iw.Hours, v.Snapshots, iw.Gaps, time.Now())
	slices.Reverse(v.Snapshots)
	if id := q.Get("snapshot"); id != "" {
		i := slices.IndexFunc(v.Snapshots, func(e api.SnapshotEntry) bool { return e.ID == id })
		if i < 0 {
			return &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Message: "source " + v.Source + " has no snapshot " + id}
		}
		v.Picked = &v.Snapshots[i]
	} else if len(v.Snapshots) > 0 {
		v.Picked = &v.Snapshots[0]
	}
	if v.Picked != nil && v.At == "" {
		v.At = snapshotMoment(*v.Picked)
	}
	if v.At != "" && (v.Picked == nil || v.At != snapshotMoment(*v.Picked)) {
		if err := c.tablesAt(r, s, &v); err != nil {
			return err
		}
	} else if v.Picked != nil && v.Table != "" {
		if err := c.firstRows(r, s, &v); err != nil {
			return err
		}
	}
	if v.Table != "" && v.Key != "" {
		h, err := c.rowHistory(r, s, v.Source, v.Table, v.Key)
		if err != nil {
			return err
		}
		v.History = h
	}
	c.render(w, r, http.StatusOK, "moment", s, v)
	return nil
}

// firstRows reads the first rows of v.Table at v.Picked's cut into
// v.Rows. A table the snapshot does not have is a 404, unless a row's
// history is asked (the table may be newer than the snapshot).
func (c *Console) firstRows(r *http.Request, s *session, v *momentView) error {
	i := slices.IndexFunc(v.Picked.Tables, func(t api.SnapshotTable) bool { return t.Schema+"."+t.Table == v.Table })
	if i < 0 && v.Key != "" {
		return nil
	}
	if i < 0 {
		return &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "table", Message: "snapshot " + v.Picked.ID + " has no table " + v.Table}
	}
	t := v.Picked.Tables[i]
	sql := "SELECT * FROM " + views.QuoteIdent(t.Schema) + "." + views.QuoteIdent(t.Table) + " LIMIT " + itoa(firstRows)
	res, err := c.ask(r, s, api.QueryRequest{SQL: sql, Source: v.Source, MaxRows: firstRows}, url.Values{"snapshot": {v.Picked.ID}})
	if err != nil {
		return err
	}
	v.Rows = &res
	return nil
}

// tablesAt reads the tables at v.At (a moment that is not a snapshot's
// cut) into v.Moment, and v.Table's first rows then. A moment that cannot
// be answered is v.Moment.Error (the API's reason), not a failed page.
func (c *Console) tablesAt(r *http.Request, s *session, v *momentView) error {
	at := url.Values{"at": {v.At}}
	res, err := c.ask(r, s, api.QueryRequest{SQL: tablesAtSQL, Source: v.Source, MaxRows: maxMomentTables}, at)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		v.Moment = &momentTables{Error: ae.Message}
		return nil
	}
	if err != nil {
		return err
	}
	v.Moment = &momentTables{Cut: res.Answer.Cut.Text}
	for _, row := range res.Cells {
		if len(row) == 2 {
			v.Moment.Tables = append(v.Moment.Tables, row[0].Text+"."+row[1].Text)
		}
	}
	if v.Table == "" || v.Key != "" {
		return nil
	}
	if !slices.Contains(v.Moment.Tables, v.Table) {
		return &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "table", Message: "no table " + v.Table + " at " + v.At}
	}
	schemaName, table, _ := strings.Cut(v.Table, ".")
	sql := "SELECT * FROM " + views.QuoteIdent(schemaName) + "." + views.QuoteIdent(table) + " LIMIT " + itoa(firstRows)
	rows, err := c.ask(r, s, api.QueryRequest{SQL: sql, Source: v.Source, MaxRows: firstRows}, at)
	if err != nil {
		return err
	}
	v.Rows = &rows
	return nil
}

// snapshotMoment is the moment of a snapshot's cut as a moment text:
// its GTID, else its binlog position.
func snapshotMoment(e api.SnapshotEntry) string {
	if e.Position.GTID != "" {
		return "gtid:" + e.Position.GTID
	}
	return "pos:" + e.Position.String()
}

// startForm is the export or restore a moment's forms ask for.
type startForm struct {
	Kind   string // export or restore
	Source string
	At     string
	Label  string
	Tables []string
	// Export: Format and Out; restore: Target and IntoSchema.
	Format, Out        string
	Target, IntoSchema string
}

// readStart reads the start form of r.
func readStart(r *http.Request) startForm {
	f := startForm{Kind: r.PostFormValue("kind"), Source: r.PostFormValue("source"), At: strings.TrimSpace(r.PostFormValue("at")),
		Label: strings.TrimSpace(r.PostFormValue("label")), Format: r.PostFormValue("format"), Out: strings.TrimSpace(r.PostFormValue("out")),
		Target: strings.TrimSpace(r.PostFormValue("target")), IntoSchema: strings.TrimSpace(r.PostFormValue("into_schema"))}
	for _, t := range strings.FieldsFunc(r.PostFormValue("tables"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' }) {
		f.Tables = append(f.Tables, t)
	}
	return f
}

// request is the API request of f: its path and body.
func (f startForm) request() (string, any, error) {
	switch f.Kind {
	case "export":
		return "/v1/exports", api.ExportRequest{Source: f.Source, Label: f.Label, Format: f.Format, At: f.At, Tables: f.Tables, Out: f.Out}, nil
	case "restore":
		return "/v1/restores", api.RestoreRequest{Source: f.Source, Label: f.Label, Target: f.Target, At: f.At, Tables: f.Tables, IntoSchema: f.IntoSchema}, nil
	}
	return "", nil, &api.Error{Status: http.StatusBadRequest, Code: api.CodeBadRequest, Field: "kind", Message: "kind " + f.Kind + ": want export or restore"}
}

// write is one place a start writes: what, and where.
type write struct{ What, Where string }

// writes is what f writes where, one line each: an export's file or folder
// in the export folder (dir), a restore's tables on the target by name.
func (f startForm) writes(dir string) []write {
	if f.Kind == "export" {
		what := "every table of the moment"
		if len(f.Tables) > 0 {
			what = strings.Join(f.Tables, ", ")
		}
		return []write{{What: what + " as " + f.Format, Where: path.Join(dir, f.Out) + " (on the workers' machines)"}}
	}
	if len(f.Tables) == 0 {
		where := "each table in its own schema"
		if f.IntoSchema != "" {
			where = "schema " + f.IntoSchema
		}
		return []write{{What: "every table of the moment", Where: "restore target " + f.Target + ", " + where}}
	}
	var out []write
	for _, t := range f.Tables {
		schema, table, ok := strings.Cut(t, ".")
		if !ok {
			out = append(out, write{What: t, Where: "(not schema.table: the API refuses it)"})
			continue
		}
		into := schema
		if f.IntoSchema != "" {
			into = strings.ReplaceAll(f.IntoSchema, "{schema}", schema)
		}
		out = append(out, write{What: t, Where: "restore target " + f.Target + ", table " + into + "." + table})
	}
	return out
}

// confirmView is the confirmation page of a start.
type confirmView struct {
	Form   startForm
	Writes []write
	Path   string
	// Body is the API request the start sends, as JSON.
	Body    string
	Tables  string
	Exports bool
}

// confirm is POST /moment/confirm: the page that shows exactly what the
// start will ask (the API request, what is written where) with the button
// that sends it. Nothing starts here.
func (c *Console) confirm(w http.ResponseWriter, r *http.Request, s *session) error {
	f := readStart(r)
	p, body, err := f.request()
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "confirm", s, confirmView{Form: f, Writes: f.writes(c.exportDir), Path: p, Body: prettyValue(body),
		Tables: strings.Join(f.Tables, ", "), Exports: c.exports})
	return nil
}

// startMoment is POST /moment/start: the confirmed export or restore is
// asked of the API (which checks it), then the job's page.
func (c *Console) startMoment(w http.ResponseWriter, r *http.Request, s *session) error {
	f := readStart(r)
	path, body, err := f.request()
	if err != nil {
		return err
	}
	var j jobs.Job
	if err := c.call(r, s, "POST", path, nil, body, &j); err != nil {
		return err
	}
	http.Redirect(w, r, "/jobs/"+url.PathEscape(j.ID), http.StatusSeeOther)
	return nil
}
