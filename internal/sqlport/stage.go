package sqlport

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/views"
)

// Staged file extensions: a table at a cut (views.WriteTable) and a
// table's base at a snapshot (views.WriteBase).
const (
	cutExt  = ".parquet"
	baseExt = ".duckdb"
)

// pin is a staged file the session reads: a base or a table at the cut.
type pin struct {
	e    *staged
	base bool
}

// stageTables points the views of the tables names (a statement's) at
// files of the port's cache (stageCache), writing those not staged yet,
// so that a table is staged once and a lookup by key reads an index:
//
//   - a table with a key read through a chain (views.Session.CanUseBase)
//     is read through its base: its rows at the snapshot, written once
//     per snapshot and shared by every connection at every cut after it,
//     with the session's changes up to its cut laid over them. No table
//     is rebuilt at a cut: a lookup by key reads the base's index and the
//     overlay's (the snapshot's row and that key's changes);
//   - any other table (no key, always written in full, reshaped after the
//     snapshot) is rebuilt at the cut once and shared by every connection
//     at exactly that cut.
//
// A table is staged from the second statement of the session that names
// it (or at once when the cache holds it): a single question at a moment
// costs what `dbtrail query`'s does, reading the view. Only a session at
// a moment (SET @@dbtrail_at) stages: at latest the cut moves with every
// statement.
func (h *handler) stageTables(ctx context.Context, s *views.Session, names []string) error {
	if h.cache == nil || h.at.Kind == "" || h.st == nil || !h.st.Live {
		return nil
	}
	for _, name := range names {
		if p, ok := h.pins[name]; ok {
			if p.base {
				if err := s.UseBase(ctx, name, p.e.path); err != nil {
					return err
				}
			}
			continue
		}
		if !hasTable(s, name) {
			continue // DuckDB's own error names it
		}
		base := s.CanUseBase(name)
		key, ext := h.cutKey()+"\x00"+name, cutExt
		write := func(path string) error { return s.WriteTable(ctx, name, path) }
		if base {
			key, ext = fmt.Sprintf("base\x00%s\x00%s\x00%s", h.cfg.Session.SourceDir, s.BaseSnapshot(), name), baseExt
			write = func(path string) error { return s.WriteBase(ctx, name, path) }
		}
		if !h.named[name] && !h.cache.has(key) {
			if h.named == nil {
				h.named = map[string]bool{}
			}
			h.named[name] = true
			continue
		}
		e, err := h.cache.acquire(ctx, key, ext, write)
		if err != nil {
			return fmt.Errorf("stage %s: %w", name, err)
		}
		if base {
			err = s.UseBase(ctx, name, e.path)
		} else {
			err = s.ReadTable(ctx, name, e.path)
		}
		if err != nil {
			h.cache.release(e)
			return err
		}
		if h.pins == nil {
			h.pins = map[string]pin{}
		}
		h.pins[name] = pin{e: e, base: base}
	}
	return nil
}

// cutKey names the session's cut exactly: the source, the base snapshot
// and the cut's seq, binlog position and GTID.
func (h *handler) cutKey() string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", h.cfg.Session.SourceDir, h.st.Snapshot, h.st.Cut.Seq,
		h.st.Cut.Txn.Position, h.st.Cut.Txn.Position.GTID)
}

// unpin releases the staged files the session reads (it moved or ended;
// the session reading them is closed right after, which detaches its
// bases).
func (h *handler) unpin() {
	h.named = nil
	for name, p := range h.pins {
		h.cache.release(p.e)
		delete(h.pins, name)
	}
}

// hasTable reports whether s has the table name (schema.table).
func hasTable(s *views.Session, name string) bool {
	for _, t := range s.Tables() {
		if t.Schema+"."+t.Table == name {
			return true
		}
	}
	return false
}
