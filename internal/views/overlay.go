package views

import (
	"context"
	"fmt"
	"slices"
)

// A session's overlay of a table is the newest effect of each key of the
// tail's window of it (the fold's newest rule: by window file, then row),
// with the key's text and the op, in a table of the session (schema
// overlaySchema). The table's view reads it in place of the window's
// files, and UseBase lays it over the table's base. At the next cut, when
// the window's files start with the ones the overlay folded (Window.Spans:
// the same window of the tail cache, up to a file ending where the
// overlay ends, or the last file it folded, whose end moved since), only
// the files after them are folded in: their keys' newest effects replace
// the overlay's rows of those keys. Otherwise (another snapshot, an
// earlier cut, files the tail staged on its own) it is made again from
// every file. So a session asked question after question reads each
// window file once, instead of every file since the snapshot each time
// (docs/tail.md, "The tail cache").

// overlayState is what a session's overlay of one table holds.
type overlayState struct {
	window  string   // Span.Window of every file folded; "" when not one: never extended
	through uint64   // the events folded end here
	last    string   // the last file folded (Span.File)
	columns []string // the table's columns
	read    int      // window files the statements that made this state read
}

// unfolded returns the index in win's files of the first one o has not
// folded, and false when win does not extend o (o is nil or holds other
// events, or win's files are not all of one cached window).
func (o *overlayState) unfolded(win *Window, columns []string) (int, bool) {
	if o == nil || o.window == "" || len(win.Spans) != len(win.Paths) || !slices.Equal(o.columns, columns) {
		return 0, false
	}
	for _, sp := range win.Spans {
		if sp.Window != o.window {
			return 0, false
		}
	}
	for i, sp := range win.Spans {
		switch {
		case sp.File == o.last, sp.Upto == o.through:
			return i + 1, true
		case sp.Upto > o.through:
			return 0, false
		}
	}
	return 0, false
}

// overlayOf is the state of an overlay holding every file of win.
func overlayOf(win *Window, columns []string) *overlayState {
	o := &overlayState{columns: slices.Clone(columns)}
	n := len(win.Spans)
	if n == 0 || n != len(win.Paths) {
		return o
	}
	for _, sp := range win.Spans {
		if sp.Window == "" || sp.Window != win.Spans[0].Window {
			return o
		}
	}
	o.window, o.through, o.last = win.Spans[0].Window, win.Spans[n-1].Upto, win.Spans[n-1].File
	return o
}

// overlayName is the overlay table of table name (schema.table).
func overlayName(name string) string { return quoteIdent(overlaySchema) + "." + quoteIdent(name) }

// overlayStmts returns the statements that bring the overlay of t (table
// name) to its window win, none when it holds win already, and the
// overlay's state once they ran; win reads the overlay from then on.
func (s *Session) overlayStmts(name string, t TableRef, win *Window) ([]string, *overlayState, error) {
	from, extend := s.overlays[name].unfolded(win, t.Columns)
	next := overlayOf(win, t.Columns)
	table := overlayName(name)
	if extend && from == len(win.Paths) {
		win.overlay = table
		return nil, next, nil
	}
	paths := win.Paths
	if extend {
		paths = paths[from:]
	}
	next.read = len(paths)
	rel, err := (&Window{Paths: paths}).relationSQL()
	if err != nil {
		return nil, nil, err
	}
	key, op := quoteIdent(win.KeyCol), quoteIdent(win.OpCol)
	newest := fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s FROM %[4]s
QUALIFY row_number() OVER (PARTITION BY %[2]s ORDER BY dbtrail_s DESC, file_row_number DESC) = 1`, joinIdents(t.Columns), key, op, rel)
	win.overlay = table
	if !extend {
		return []string{"CREATE SCHEMA IF NOT EXISTS " + quoteIdent(overlaySchema),
			fmt.Sprintf("CREATE OR REPLACE TABLE %s AS\n%s", table, newest)}, next, nil
	}
	return []string{
		fmt.Sprintf("DELETE FROM %s WHERE %s IN (SELECT %s FROM %s)", table, key, key, rel),
		fmt.Sprintf("INSERT INTO %s\n%s", table, newest),
	}, next, nil
}

// overlaysStmts returns the statements that bring the overlays of tables
// to their windows in s.tail (a table without one has no overlay), and
// the states to record once they ran (nil: drop the table's state).
func (s *Session) overlaysStmts(tail *Tail, tables []TableRef) ([]string, map[string]*overlayState, error) {
	var stmts []string
	states := map[string]*overlayState{}
	for _, t := range tables {
		name := t.Schema + "." + t.Table
		win := tail.Windows[name]
		if win == nil || tail.Pending[name] || tail.Files[name] != "" || t.fullOnly() {
			continue
		}
		q, st, err := s.overlayStmts(name, t, win)
		if err != nil {
			return nil, nil, err
		}
		stmts, states[name] = append(stmts, q...), st
	}
	return stmts, states, nil
}

// execAtomically runs stmts in one transaction: all of them or none.
func (s *Session) execAtomically(ctx context.Context, stmts []string) error {
	if _, err := s.conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := s.conn.ExecContext(ctx, q); err != nil {
			s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			return err
		}
	}
	if _, err := s.conn.ExecContext(ctx, "COMMIT"); err != nil {
		s.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	return nil
}

// OverlayReads is how many window files the session has read into its
// overlays: at most one per file of each window when every question
// extends the last one's, every file of every window when none does.
func (s *Session) OverlayReads() int { return s.overlayReads }

// recordOverlays records the overlays' states once their statements ran.
func (s *Session) recordOverlays(states map[string]*overlayState) {
	if s.overlays == nil {
		s.overlays = map[string]*overlayState{}
	}
	for name, st := range states {
		if st == nil {
			delete(s.overlays, name)
		} else {
			s.overlays[name] = st
			s.overlayReads += st.read
		}
	}
}
