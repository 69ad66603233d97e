package sqlport

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/views"
)

// stageTables points the views of the tables names (a statement's) at
// the port's tables staged at the session's cut (stageCache), writing those
// not staged yet: each table of a moment is then rebuilt once, and a lookup
// by key reads an indexed table. A table is staged from the second
// statement of the session that names it (or at once when another
// connection staged it at this cut): a single question at a moment costs
// what `dbtrail query`'s does, reading the view. Only a session at a
// moment (SET @@dbtrail_at) stages: at latest the cut moves with every
// statement.
func (h *handler) stageTables(ctx context.Context, s *views.Session, names []string) error {
	if h.cache == nil || h.at.Kind == "" || h.st == nil || !h.st.Live {
		return nil
	}
	cut := h.cutKey()
	for _, name := range names {
		if h.pins[name] != nil {
			continue
		}
		if !hasTable(s, name) {
			continue // DuckDB's own error names it
		}
		key := cut + "\x00" + name
		if !h.named[name] && !h.cache.has(key) {
			if h.named == nil {
				h.named = map[string]bool{}
			}
			h.named[name] = true
			continue
		}
		e, err := h.cache.acquire(ctx, key, func(path string) error { return s.WriteTable(ctx, name, path) })
		if err != nil {
			return fmt.Errorf("stage %s at the session's cut: %w", name, err)
		}
		if err := s.ReadTable(ctx, name, e.path); err != nil {
			h.cache.release(e)
			return err
		}
		if h.pins == nil {
			h.pins = map[string]*staged{}
		}
		h.pins[name] = e
	}
	return nil
}

// cutKey names the session's cut exactly: the source, the base snapshot
// and the cut's seq, binlog position and GTID.
func (h *handler) cutKey() string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", h.cfg.Session.SourceDir, h.st.Snapshot, h.st.Cut.Seq,
		h.st.Cut.Txn.Position, h.st.Cut.Txn.Position.GTID)
}

// unpin releases the staged tables the session reads (it moved or ended).
func (h *handler) unpin() {
	h.named = nil
	for name, e := range h.pins {
		h.cache.release(e)
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
