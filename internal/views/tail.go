package views

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// Tail is what a query session's views add to one snapshot: the changes
// captured after it, up to one cut for every table (internal/tail prepares
// it; docs/tail.md). A table with neither a window nor a file reads the
// snapshot alone: it has no change between the snapshot and the cut.
type Tail struct {
	// Snapshot pins the views to snapshots/<Snapshot> (required): the
	// snapshot the windows start after.
	Snapshot string
	// Windows are the changes of tables read through a chain, by
	// schema.table: each window's effects apply after the chain, with the
	// fold's rule (the rows of keys the window changed are stale; the
	// newest effect of each key is its row, unless it is a delete).
	Windows map[string]*Window
	// Files are table files, by schema.table, holding a table always
	// written in full (snapshot.FullOnly) as it is at the cut: the view
	// reads it in place of the snapshot's.
	Files map[string]string
	// Note says what the views answer: the cut and the snapshot, or why
	// the changes after the snapshot are left out.
	Note string
	// Pending are changed tables, by schema.table, whose changes are not
	// staged yet: a session stages them (Stage) when a statement names
	// them, at the same cut. Until then their views fail, naming the
	// table: never the snapshot's rows in place of the cut's.
	Pending map[string]bool
	// Stage stages the changes of names (all in Pending) into Windows or
	// Files and removes them from Pending.
	Stage func(ctx context.Context, names []string) error
	// Shapes are the definitions at the cut, by schema.table, of tables
	// whose columns a schema change after the snapshot changed: their tail
	// is a file (Files) of that shape, and their view has its columns.
	Shapes map[string]*schema.Table
	// Defined are the definitions at the cut, by schema.table, of tables
	// whose definition (not columns or rows) a schema change after the
	// snapshot moved: indexes, comments, defaults (moment.TablePlan.Def);
	// CreateFrom names, for some of them, a later snapshot holding their
	// CREATE TABLE at the cut. Their views read as the snapshot's.
	Defined    map[string]*schema.Table
	CreateFrom map[string]string
	// Gone are the snapshot's tables, by schema.table, that do not exist
	// at the cut (dropped, or renamed to another name, which Shapes and
	// Files then hold): they have no view.
	Gone map[string]bool
}

// TablesAt is the tables of the views at the tail's cut, given snap, the
// tables of its snapshot: snap without the Gone ones, a table of Shapes
// with the columns of its definition at the cut (created or renamed after
// the snapshot: read from its file alone; changed after it: its view is
// its staged file, so its columns are the shape's too), sorted by schema
// then table.
func (t *Tail) TablesAt(snap []TableRef) []TableRef {
	out := make([]TableRef, 0, len(snap)+len(t.Shapes))
	have := map[string]bool{}
	for _, r := range snap {
		name := r.Schema + "." + r.Table
		have[name] = true
		if t.Gone[name] {
			continue
		}
		if d := t.Shapes[name]; d != nil {
			r = shapeRef(d)
		}
		out = append(out, r)
	}
	for name, d := range t.Shapes {
		if have[name] || d == nil {
			continue
		}
		out = append(out, shapeRef(d))
	}
	slices.SortFunc(out, func(a, b TableRef) int {
		return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Table, b.Table))
	})
	return out
}

// shapeRef is the table of definition d read from a file of its own.
func shapeRef(d *schema.Table) TableRef {
	r := TableRef{Schema: d.Schema, Table: d.Name, Defs: slices.Clone(d.Columns), Full: true}
	for _, c := range d.Columns {
		r.Columns = append(r.Columns, c.Name)
	}
	return r
}

// unstagedSchema holds the stand-ins of pending tables' views (see
// pendingViewSQL).
const unstagedSchema = "dbtrail_unstaged"

// unstagedNote ends the name of a pending table's stand-in: DuckDB's
// error binding its view names it.
const unstagedNote = "after the snapshot were not staged for this statement"

// Window is one table's changes after the snapshot: fold window scratch
// files (fold.Window), each of consecutive events, their rows in stream
// order, each the row effect of one change on one key (an upsert with the
// after image, a delete with the before image). A row's place in the
// stream is its file's in Paths, then its row number in the file.
type Window struct {
	Paths []string
	// Spans, when not nil, say which events each of Paths holds (Spans[i]
	// Paths[i]'s): a session keeps the newest effect of each key of the
	// files it read (its overlay) and, at the next cut, folds only the
	// files after them (overlay.go). nil, or a span without a Window, and
	// the overlay is made again from every file.
	Spans         []Span
	KeyCol, OpCol string // the columns of the key's text and of the op
	Events        int64
	// KeyMatch is the condition under which a table row aliased left has
	// the key of a window row aliased right (fold.KeyMatch).
	KeyMatch func(left, right string) string

	// overlay, when set by a session, is its table holding the newest
	// effect of each key of Paths (overlay.go), read in place of them.
	overlay string
}

// Span names the events a window file holds: the events in (From, Upto]
// of Window, a text naming one table's changes after one snapshot in one
// process's tail cache (the same for every file of that window, "" when
// unknown), in the file named File, whose events never change (a later
// file may extend Upto when no event came after it: its events are the
// same).
type Span struct {
	Window, File string
	From, Upto   uint64
}

// relationSQL is the window's rows as one relation: each file's columns,
// file_row_number, and dbtrail_s, the file's place in Paths; stream order
// is (dbtrail_s, file_row_number).
func (w *Window) relationSQL() (string, error) {
	if len(w.Paths) == 0 {
		return "", fmt.Errorf("views: a window without a file")
	}
	parts := make([]string, len(w.Paths))
	for i, path := range w.Paths {
		p, err := absPath(path)
		if err != nil {
			return "", err
		}
		parts[i] = fmt.Sprintf("SELECT *, %d AS dbtrail_s FROM read_parquet(%s, file_row_number = true)", i, quoteString(p))
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ")", nil
}

// WriteTail writes the views of tables over tail: Write's text, pinned to
// tail.Snapshot, with the views of changed tables reading their window or
// file. A window of a table always written in full is an error: such a
// table's tail is a file.
func WriteTail(w io.Writer, o Options, tables []TableRef, tail *Tail) error {
	dir, views, err := tailViews(o, tables, tail)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, tailText(dir, tail, views))
	return err
}

// tailText is WriteTail's text of views (tailViews'), over the snapshot
// folder dir.
func tailText(dir string, tail *Tail, views []tableView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- DuckDB views over %s and the changes after it (generated by dbtrail query).\n", comment(dir))
	fmt.Fprintf(&b, "-- %s\n", comment(tail.Note))
	if len(tail.Pending) > 0 {
		fmt.Fprintf(&b, "\nCREATE SCHEMA IF NOT EXISTS %s;\n", quoteIdent(unstagedSchema))
	}
	schemas := map[string]bool{}
	for _, v := range views {
		if !schemas[v.schema] {
			schemas[v.schema] = true
			fmt.Fprintf(&b, "\nCREATE SCHEMA IF NOT EXISTS %s;\n", quoteIdent(v.schema))
		}
		b.WriteString("\n")
		b.WriteString(v.sql)
	}
	return b.String()
}

// tableView is one table's statements in a views text.
type tableView struct {
	schema, name string // name is schema.table
	sql          string
}

// tailViews are WriteTail's views, table by table, and the snapshot
// folder they read.
func tailViews(o Options, tables []TableRef, tail *Tail) (string, []tableView, error) {
	o.Snapshot = tail.Snapshot
	dir, err := readDir(o)
	if err != nil {
		return "", nil, err
	}
	out := make([]tableView, 0, len(tables))
	for _, t := range tables {
		if err := checkRef(t); err != nil {
			return "", nil, err
		}
		sql, err := tailViewSQL(dir, t, tail, o)
		if err != nil {
			return "", nil, err
		}
		out = append(out, tableView{schema: t.Schema, name: t.Schema + "." + t.Table, sql: sql})
	}
	return dir, out, nil
}

// tailViewSQL is the view of t over tail: a pending table's stand-in, a
// file's, a window's (through the session's overlay when it has one), or
// the snapshot's.
func tailViewSQL(dir string, t TableRef, tail *Tail, o Options) (string, error) {
	name := t.Schema + "." + t.Table
	win, file := tail.Windows[name], tail.Files[name]
	if d := tail.Shapes[name]; d != nil && file != "" {
		t = shapeRef(d)
	}
	switch {
	case tail.Pending[name]:
		return pendingViewSQL(dir, t, o), nil
	case file != "":
		return fileViewSQL(file, t, o)
	case win != nil && t.fullOnly():
		return "", fmt.Errorf("views: table %q.%q is always written in full: its tail must be a table file, not a window", t.Schema, t.Table)
	case win != nil && win.overlay != "":
		return overlayViewSQL(dir, t, win, o), nil
	case win != nil:
		return windowViewSQL(dir, t, win, o)
	}
	return viewSQL(dir, t, o), nil
}

// pendingViewSQL is the stand-in view of a changed table whose changes
// are not staged: it has the table's columns and types, and reading it
// fails with DuckDB's "Table with name <stand-in> does not exist", the
// stand-in's name saying that the table's tail is not staged. The view
// selects from a table of the stand-in's name, created empty and dropped
// right after the view (DuckDB binds a view when it is created and again
// when it is read).
func pendingViewSQL(dir string, t TableRef, o Options) string {
	name := quoteIdent(t.Schema) + "." + quoteIdent(t.Table)
	standIn := quoteIdent(unstagedSchema) + "." +
		quoteIdent(fmt.Sprintf("dbtrail: the changes of %s.%s %s", t.Schema, t.Table, unstagedNote))
	tableFile := quoteString(globEscape(dir) + "/" + globEscape(t.Schema) + "/" + globEscape(t.Table) + ".parquet")
	shown := joinIdents(t.Columns)
	if !o.Raw {
		shown = typedList(t, o.Exact)
	}
	return fmt.Sprintf(`-- %[1]s: its changes after the snapshot are staged when a statement names it.
CREATE OR REPLACE TABLE %[2]s AS SELECT %[3]s FROM read_parquet(%[4]s) LIMIT 0;
CREATE OR REPLACE VIEW %[1]s AS SELECT %[5]s FROM %[2]s;
DROP TABLE %[2]s;
`, name, standIn, joinIdents(t.Columns), tableFile, shown)
}

// absPath is path absolute, slash-separated and glob-escaped for
// read_parquet.
func absPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("views: %s: %w", path, err)
	}
	abs = filepath.ToSlash(abs)
	if strings.ContainsAny(abs, "\\\x00") {
		return "", fmt.Errorf("views: DuckDB cannot read a path holding a backslash or NUL: %q", abs)
	}
	return globEscape(abs), nil
}

// fileViewSQL is the view of t reading the table file at path alone.
func fileViewSQL(path string, t TableRef, o Options) (string, error) {
	p, err := absPath(path)
	if err != nil {
		return "", err
	}
	shown := joinIdents(t.Columns)
	if !o.Raw {
		shown = typedList(t, o.Exact)
	}
	name := quoteIdent(t.Schema) + "." + quoteIdent(t.Table)
	return fmt.Sprintf("-- %s as it is at the cut: the snapshot's rows with the changes after it, folded into one file.\n"+
		"CREATE OR REPLACE VIEW %s AS\nSELECT %s FROM read_parquet(%s);\n", comment(name), name, shown, quoteString(p)), nil
}

// windowViewSQL is the view of t reading its table file and chain under
// dir (as viewSQL does) with win applied after the chain: the table file's
// rows no .posdel names and whose key win does not hold (KeyMatch,
// the fold's stale rule), then the newest version of every key across the
// chain's .upserts (by chain number) and the window (after every chain
// file, by window file then row) unless it is a delete (the fold's newest
// rule).
func windowViewSQL(dir string, t TableRef, win *Window, o Options) (string, error) {
	window, err := win.relationSQL()
	if err != nil {
		return "", err
	}
	name := quoteIdent(t.Schema) + "." + quoteIdent(t.Table)
	dir = globEscape(dir) + "/" + globEscape(t.Schema) + "/"
	tableFile := quoteString(dir + globEscape(t.Table) + ".parquet")
	list := joinIdents(t.Columns)
	shown := list
	if !o.Raw {
		shown = typedList(t, o.Exact)
	}
	pdGlob := quoteString(dir + globEscape(t.Table) + ".[0-9]*.posdel")
	pdMatch := quoteString(regexp.QuoteMeta(t.Table) + `\.[0-9]+(-[0-9]+)?\.posdel`)
	upGlob := quoteString(dir + globEscape(t.Table) + ".[0-9]*.upserts")
	upMatch := quoteString(regexp.QuoteMeta(t.Table) + `\.[0-9]+(-[0-9]+)?\.upserts`)
	return fmt.Sprintf(`-- %[11]s with the changes after the snapshot (a window of %[12]d events).
CREATE OR REPLACE VIEW %[1]s AS
WITH dbtrail_dead AS (
    SELECT "row" FROM read_parquet(%[3]s, filename = true, union_by_name = true)
    WHERE regexp_full_match(parse_filename(filename), %[4]s)
), dbtrail_versions AS (
    SELECT %[7]s, bintrail_pk AS dbtrail_k, bintrail_op AS dbtrail_o,
        CAST(regexp_extract(parse_filename(filename), '([0-9]+)\.upserts$', 1) AS BIGINT) AS dbtrail_f, 0 AS dbtrail_s, 0 AS dbtrail_r
    FROM read_parquet(%[5]s, filename = true, union_by_name = true)
    WHERE regexp_full_match(parse_filename(filename), %[6]s)
    UNION ALL
    SELECT %[7]s, %[9]s, %[10]s, 9223372036854775807, dbtrail_s, file_row_number FROM %[13]s
), dbtrail_newest AS (
    SELECT * FROM dbtrail_versions
    QUALIFY row_number() OVER (PARTITION BY dbtrail_k ORDER BY dbtrail_f DESC, dbtrail_s DESC, dbtrail_r DESC) = 1
), dbtrail_rows AS (
    SELECT %[7]s FROM read_parquet(%[2]s, file_row_number = true) AS dbtrail_base
    WHERE NOT EXISTS (SELECT 1 FROM dbtrail_dead WHERE dbtrail_dead."row" = dbtrail_base.file_row_number)
      AND NOT EXISTS (SELECT 1 FROM %[13]s AS dbtrail_window WHERE %[14]s)
    UNION ALL
    SELECT %[7]s FROM dbtrail_newest WHERE dbtrail_o = 'u'
)
SELECT %[8]s FROM dbtrail_rows;
`, name, tableFile, pdGlob, pdMatch, upGlob, upMatch, list, shown,
		quoteIdent(win.KeyCol), quoteIdent(win.OpCol), comment(name), win.Events, window,
		win.KeyMatch("dbtrail_base", "dbtrail_window")), nil
}

// overlayViewSQL is the view of t reading its table file and chain under
// dir (chainSelect) with the session's overlay of win laid over them: the
// rows whose key the overlay does not hold, then the overlay's upserts.
// The same rows as windowViewSQL's, the window's newest effects read from
// one table of one row per key instead of ordered from its files.
func overlayViewSQL(dir string, t TableRef, win *Window, o Options) string {
	name := quoteIdent(t.Schema) + "." + quoteIdent(t.Table)
	list := joinIdents(t.Columns)
	shown := list
	if !o.Raw {
		shown = typedList(t, o.Exact)
	}
	return fmt.Sprintf(`-- %[1]s with the changes after the snapshot, folded in the session's overlay %[2]s.
CREATE OR REPLACE VIEW %[3]s AS
WITH dbtrail_snapshot AS (
%[4]s
)
SELECT %[5]s FROM (
    SELECT %[6]s FROM dbtrail_snapshot AS dbtrail_base
    WHERE NOT EXISTS (SELECT 1 FROM %[7]s AS dbtrail_window WHERE %[8]s)
    UNION ALL
    SELECT %[6]s FROM %[7]s WHERE %[9]s = 'u'
);
`, comment(name), comment(win.overlay), name, chainSelect(dir, t, list), shown, list, win.overlay,
		win.KeyMatch("dbtrail_base", "dbtrail_window"), quoteIdent(win.OpCol))
}

// joinIdents quotes and joins column names.
func joinIdents(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}
