package sqlport

import (
	"context"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/internal/when"
)

// splitSchemaAt splits a database name of the form db@T (T any moment
// --at takes, bare or in single or double quotes: shop@seq:1234,
// shop@'2026-12-01 10:41:59') into the database and the moment; a name
// without '@' has no moment. A name that is a schema of the views as a
// whole is taken as such by the caller first.
func splitSchemaAt(name string) (db, at string, ok bool) {
	i := strings.LastIndexByte(name, '@')
	if i < 0 {
		// A quoted moment may hold no '@' but the name may: look for the
		// quote form only when an '@' is there.
		return name, "", false
	}
	db, at = name[:i], strings.TrimSpace(name[i+1:])
	if len(at) >= 2 && (at[0] == '\'' || at[0] == '"') && at[len(at)-1] == at[0] {
		at = at[1 : len(at)-1]
	}
	return db, at, true
}

// useDB is USE / COM_INIT_DB / the handshake's database: db, or db@T,
// which also moves the session to moment T (as SET @@dbtrail_at). An
// unknown database is error 1049, a moment that cannot be answered 1231;
// either way the session stays at its database and moment.
func (h *handler) useDB(ctx context.Context, name string) error {
	if strings.EqualFold(name, infoSchema) {
		h.db = infoSchema
		return nil
	}
	s, err := h.session(ctx)
	if err != nil {
		return errRefused(mysql.ER_UNKNOWN_ERROR, "%v", err)
	}
	if hasSchema(s, name) {
		h.db = name
		return nil
	}
	db, at, ok := splitSchemaAt(name)
	if !ok {
		return errRefused(mysql.ER_BAD_DB_ERROR, "Unknown database '%s'", name)
	}
	err = h.moveTo(ctx, at, func(s *views.Session) error {
		if !hasSchema(s, db) && !strings.EqualFold(db, infoSchema) {
			return errRefused(mysql.ER_BAD_DB_ERROR, "Unknown database '%s' at %s", db, at)
		}
		return nil
	})
	if err != nil {
		return err
	}
	h.db = db
	if strings.EqualFold(db, infoSchema) {
		h.db = infoSchema
	}
	return nil
}

func hasSchema(s *views.Session, db string) bool {
	for _, t := range s.Tables() {
		if t.Schema == db {
			return true
		}
	}
	return false
}

// moveTo moves the session to moment text (when.Parse): the session
// is reopened at it now, so a moment that cannot be answered is refused
// here, with the reason; check, when given, is asked of the new session
// too. On a refusal the session stays where it was.
func (h *handler) moveTo(ctx context.Context, text string, check func(*views.Session) error) error {
	if h.cfg.Tail == nil {
		return errRefused(mysql.ER_WRONG_VALUE_FOR_VAR, "dbtrail_at needs the index: this port reads the current snapshot alone")
	}
	at, err := when.Parse(h.inSessionZone(text))
	if err != nil {
		return errRefused(mysql.ER_WRONG_VALUE_FOR_VAR, "dbtrail_at: %v", err)
	}
	if at.Kind == when.KindLatest {
		at = when.At{}
	}
	old, oldAt, oldSt := h.sess, h.at, h.st
	h.sess, h.at = nil, at
	s, err := h.session(ctx)
	if err == nil && check != nil {
		err = check(s)
	}
	if err != nil {
		if s != nil {
			s.Close()
		}
		h.sess, h.at, h.st = old, oldAt, oldSt
		if _, ok := err.(*mysql.MyError); ok {
			return err
		}
		return errRefused(mysql.ER_WRONG_VALUE_FOR_VAR, "dbtrail_at %s: %v", text, err)
	}
	h.unpin()
	if old != nil {
		old.Close()
	}
	return nil
}

// now is the commit time of the transaction the session answers at: the
// cut's, or, at a snapshot alone (or a cut before any captured
// transaction), the snapshot's time.
func (h *handler) now(s *views.Session) time.Time {
	if h.st != nil && h.st.Live && h.st.Cut.Landed && !h.st.Cut.Txn.CommitTime.IsZero() {
		return h.st.Cut.Txn.CommitTime
	}
	t, _ := snapshot.ParseSnapshotID(s.Snapshot())
	return t
}

// rewriteRead is the second step of a read's translation (rewrite) in the
// session s.
func (h *handler) rewriteRead(ctx context.Context, s *views.Session, text string) (string, error) {
	env := &rewriteEnv{
		db:     h.db,
		tables: s.Tables(),
		funcs: &funcEnv{now: h.now(s), loc: h.location(), db: h.db, user: h.user, concatMax: h.groupConcatMax(),
			variable: func(name string) (any, error) { return h.variable(ctx, name) }},
		table: func(schemaName, table string) (*tableInfo, error) {
			if h.cat == nil {
				h.cat = &catalog{sourceDir: h.cfg.Session.SourceDir}
			}
			return h.cat.table(s, schemaName, table)
		},
		lookup: s.BaseLookup,
	}
	return rewrite(ctx, text, env)
}
