package views

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Tail returns the tail the views read (nil without SessionOptions.Tail).
func (s *Session) Tail() *Tail { return s.tail }

// reloadTail prepares a new tail and loads the views of its snapshot and
// changes; the previous tail's folder is removed once they replaced its
// views. It reports whether tables or columns changed.
func (s *Session) reloadTail(ctx context.Context) (bool, error) {
	if err := os.MkdirAll(s.tailRoot, filemode.Dir()); err != nil {
		return false, fmt.Errorf("views: tail folder: %w", err)
	}
	dir, err := os.MkdirTemp(s.tailRoot, "tail-")
	if err != nil {
		return false, fmt.Errorf("views: tail folder: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(dir)
		}
	}()
	tail, err := s.opt.Tail(ctx, dir)
	if err != nil {
		return false, err
	}
	if tail.Snapshot == "" {
		return false, fmt.Errorf("views: the tail names no snapshot")
	}
	base := s.base
	if tail.Snapshot != s.loaded {
		snapDir := filepath.Join(s.opt.SourceDir, snapshot.SnapshotsDir, tail.Snapshot)
		if base, err = TablesFromSnapshot(snapDir); err != nil {
			return false, err
		}
		if len(base) == 0 {
			return false, fmt.Errorf("views: snapshot %s holds no table", tail.Snapshot)
		}
	}
	tables := tail.TablesAt(base)
	// The tables whose overlay the session holds (it read them at an
	// earlier cut) are staged now, their new events folded in, so that
	// their views stay as they are (reading the overlay at the new cut)
	// instead of becoming stand-ins made again at the next statement.
	var eager []string
	for name := range tail.Pending {
		if s.overlays[name] != nil {
			eager = append(eager, name)
		}
	}
	if len(eager) > 0 {
		slices.Sort(eager)
		if err := tail.Stage(ctx, eager); err != nil {
			return false, err
		}
	}
	pre, states, err := s.overlaysStmts(tail, tables)
	if err != nil {
		return false, err
	}
	snapDir, views, err := tailViews(s.opt.Options, tables, tail)
	if err != nil {
		return false, err
	}
	changed := !sameShape(s.tables, tables)
	for name := range s.overlays {
		if _, ok := states[name]; !ok && tail.Windows[name] == nil && !tail.Pending[name] {
			pre, states[name] = append(pre, "DROP TABLE IF EXISTS "+overlayName(name)), nil
		}
	}
	if err := s.replaceViews(ctx, tables, views, len(tail.Pending) > 0, []byte(tailText(snapDir, tail, views)), pre); err != nil {
		return false, err
	}
	s.recordOverlays(states)
	if s.tailDir != "" {
		if err := os.RemoveAll(s.tailDir); err != nil {
			return false, fmt.Errorf("views: remove the previous tail: %w", err)
		}
	}
	keep = true
	s.loaded, s.base, s.tail, s.tailDir = tail.Snapshot, base, tail, dir
	return changed, nil
}

// sameShape reports whether two lists of tables have the same names and
// columns in the same order.
func sameShape(a, b []TableRef) bool {
	return slices.EqualFunc(a, b, func(x, y TableRef) bool {
		return x.Schema == y.Schema && x.Table == y.Table && slices.Equal(x.Columns, y.Columns)
	})
}

// stagePending stages the pending tables of names (every pending table
// with all) and replaces their views with views of their changes. The cut
// stays the tail's.
func (s *Session) stagePending(ctx context.Context, names map[string]bool, all bool) error {
	if s.tail == nil || len(s.tail.Pending) == 0 {
		return nil
	}
	var stage []string
	for name := range s.tail.Pending {
		if all || names[name] {
			stage = append(stage, name)
		}
	}
	if len(stage) == 0 {
		return nil
	}
	slices.Sort(stage)
	if err := s.tail.Stage(ctx, stage); err != nil {
		return err
	}
	var tables []TableRef
	for _, t := range s.tables {
		if slices.Contains(stage, t.Schema+"."+t.Table) {
			tables = append(tables, t)
		}
	}
	pre, states, err := s.overlaysStmts(s.tail, tables)
	if err != nil {
		return err
	}
	dir, views, err := tailViews(s.opt.Options, tables, s.tail)
	if err != nil {
		return err
	}
	if err := s.execAtomically(ctx, append(pre, tailText(dir, s.tail, views))); err != nil {
		return fmt.Errorf("views: load the tail's views of %s: %w", strings.Join(stage, ", "), err)
	}
	s.recordOverlays(states)
	if s.views == nil {
		s.views = map[string]string{}
	}
	for _, v := range views {
		s.views[v.name] = v.sql
		s.viewsMade++
	}
	return nil
}

// replaceViews is replace for a tail's views: in one transaction it drops
// the views of tables no longer present, runs pre (the overlays'
// statements) and makes again only the views whose statements changed
// (a view reading an overlay keeps its text while the snapshot stays: the
// overlay holds the new cut). full is the whole text, kept as the
// session's; unstaged says whether the stand-ins' schema is needed.
func (s *Session) replaceViews(ctx context.Context, tables []TableRef, views []tableView, unstaged bool, full []byte, pre []string) error {
	stmts := append(s.dropGone(tables), pre...)
	if unstaged {
		stmts = append(stmts, "CREATE SCHEMA IF NOT EXISTS "+quoteIdent(unstagedSchema))
	}
	made, n := map[string]string{}, 0
	schemas := map[string]bool{}
	for _, v := range views {
		if !schemas[v.schema] {
			schemas[v.schema] = true
			stmts = append(stmts, "CREATE SCHEMA IF NOT EXISTS "+quoteIdent(v.schema))
		}
		if s.views[v.name] != v.sql {
			stmts = append(stmts, v.sql)
			n++
		}
		made[v.name] = v.sql
	}
	if err := s.execAtomically(ctx, stmts); err != nil {
		return fmt.Errorf("views: load views of %s: %w", s.opt.SnapshotDir(), err)
	}
	s.viewsMade += n
	s.tables, s.text, s.views, s.based, s.lookups = tables, full, made, nil, nil
	return nil
}

// isUnstaged reports whether err is DuckDB's failure to bind the view of a
// pending table (pendingViewSQL).
func isUnstaged(err error) bool { return strings.Contains(err.Error(), unstagedNote) }
