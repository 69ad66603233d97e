package sqlport

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
	"github.com/go-mysql-org/go-mysql/stmt"

	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/internal/when"
)

// handler answers one connection's commands (server.Handler). It holds the
// connection's views session, opened at the first statement that reads and
// reopened when SET @@dbtrail_at moves it.
type handler struct {
	cfg  *Config
	ctx  context.Context
	user string
	db   string
	at   when.At // zero: latest
	sess *views.Session
	// results is the collation id of character_set_results (collation.go;
	// 0: NULL, no conversion); tz the session's time_zone (nil: UTC) and
	// tzName as it was set.
	results uint16
	tz      *time.Location
	tzName  string
	// concatMax is the session's group_concat_max_len (0: the default,
	// defaultConcatMax).
	concatMax int64
	st        *tail.State          // the prepared tail the session answers at, with a tail
	defs      map[string]*tableDef // stored definitions read, by schema.table (defs.go)
	cat       *catalog             // the session's snapshot's catalog, loaded when a rewrite needs it
	// cache is the port's staged tables; pins the ones the session reads.
	cache *stageCache
	pins  map[string]pin
	named map[string]bool // tables statements at this cut named, not staged
	// stmts are the prepared statements, by go-mysql's context (stmt.go).
	stmts map[*stmt.PreparedStmt]*prepared
	// id is the connection's id (CONNECTION_ID(), KILL); conns the port's
	// connections; inflight the statement in progress, for KILL QUERY;
	// closeConn ends the connection (KILL CONNECTION).
	id        uint32
	conns     *conns
	inflight  running
	closeConn func()
}

var _ server.Handler = (*handler)(nil)

// close closes the session.
func (h *handler) close() {
	h.unpin()
	if h.sess != nil {
		h.sess.Close()
		h.sess = nil
	}
}

// errRefused is a MySQL error of the port's refusals (ER_UNKNOWN_ERROR
// unless a code is given).
func errRefused(code uint16, format string, args ...any) *mysql.MyError {
	return mysql.NewError(code, fmt.Sprintf(format, args...))
}

// session opens the connection's session at h.at when none is open; at
// latest an open one is reloaded, so each statement reads the newest
// captured transaction.
func (h *handler) session(ctx context.Context) (*views.Session, error) {
	if h.sess != nil {
		if h.cfg.Tail != nil && h.at.Kind == "" {
			if _, err := h.sess.Reload(ctx); err != nil {
				return nil, err
			}
		}
		return h.sess, nil
	}
	o := h.cfg.Session
	o.Exact = true      // every value as the source had it (views.Options.Exact)
	o.MySQLNulls = true // NULL first ascending, last descending
	if h.cfg.Tail != nil {
		r := *h.cfg.Tail
		r.At = h.at
		o.Tail = r.ViewsTail(func(st *tail.State) { h.st = st })
	}
	s, err := views.OpenSession(ctx, o)
	if err != nil {
		return nil, err
	}
	h.sess = s
	return s, nil
}

// UseDB is USE / COM_INIT_DB / the handshake's database (useDB).
func (h *handler) UseDB(db string) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.Timeout)
	defer cancel()
	return h.useDB(ctx, db)
}

// HandleQuery answers one COM_QUERY statement.
func (h *handler) HandleQuery(query string) (*mysql.Result, error) {
	return h.run(func(ctx context.Context) (*mysql.Result, error) { return h.query(ctx, query) })
}

func (h *handler) query(ctx context.Context, query string) (*mysql.Result, error) {
	if m := killStmt.FindStringSubmatch(query); m != nil {
		return nil, h.kill(m)
	}
	if connectionID.MatchString(query) {
		return h.connectionIDResult()
	}
	if res, ok, err := h.protoStatement(ctx, query); ok {
		return res, err
	}
	p, err := classify(query)
	if err != nil {
		return nil, errRefused(mysql.ER_PARSE_ERROR, "%v", err)
	}
	switch p.kind {
	case kindWrite:
		return nil, errRefused(mysql.ER_OPTION_PREVENTS_STATEMENT,
			"The dbtrail SQL port is running with the --read-only option so it cannot execute this statement: it answers reads of the backup only")
	case kindSetOther:
		return nil, h.set(p.arg)
	case kindSetAt:
		return nil, h.setAt(ctx, p.arg)
	case kindUse:
		return nil, h.UseDB(p.arg)
	case kindVariable:
		return h.variables(ctx, p.vars)
	case kindShowMeta:
		return h.showMetaAnswer(ctx, p.arg, p.like)
	case kindShowDatabases:
		return h.showDatabases(ctx)
	case kindShowTables:
		return h.showTables(ctx, p)
	case kindShowColumns:
		return h.showColumnsStored(ctx, p.arg)
	}
	release, err := h.slot(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	s, err := h.session(ctx)
	if err != nil {
		return nil, err
	}
	q, err := h.rewriteRead(ctx, s, p.sql)
	if err != nil {
		return nil, err
	}
	rows, _, err := s.QueryAfter(ctx, q, func(ctx context.Context, names []string) error { return h.stageTables(ctx, s, names) })
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	rs, err := h.answer(ctx, s, p.sql, rows, false)
	if err != nil {
		return nil, err
	}
	if err := h.checkBytes(rs); err != nil {
		return nil, err
	}
	return mysql.NewResult(rs), nil
}

// setAt moves the session to moment text (when.Parse): the session
// is reopened at it now, so a moment that cannot be answered is refused
// here, with the reason, and the session stays where it was.
func (h *handler) setAt(ctx context.Context, text string) error {
	return h.moveTo(ctx, text, nil)
}

// variables answers SELECT @@name, …: the ones clients send first, and
// dbtrail_at and dbtrail_cut.
func (h *handler) variables(ctx context.Context, vars []string) (*mysql.Result, error) {
	names := make([]string, len(vars))
	row := make([]any, len(vars))
	for i, v := range vars {
		names[i] = "@@" + v
		val, err := h.variable(ctx, v)
		if err != nil {
			return nil, err
		}
		row[i] = val
	}
	rs, err := mysql.BuildSimpleTextResultset(names, [][]any{row})
	if err != nil {
		return nil, err
	}
	return mysql.NewResult(rs), nil
}

// cut names the transaction the session answers at: the tail's cut (its
// GTID, binlog position, commit time and seq), or the snapshot's position.
func (h *handler) cut(ctx context.Context) (string, error) {
	s, err := h.session(ctx)
	if err != nil {
		return "", err
	}
	if h.st != nil {
		return h.st.String(), nil
	}
	return "cut: snapshot " + s.Snapshot() + " (the snapshot alone: no tail)", nil
}

// schemas are the schemas of the session's views, sorted.
func (h *handler) schemas(ctx context.Context) ([]string, *views.Session, error) {
	s, err := h.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range s.Tables() {
		if !seen[t.Schema] {
			seen[t.Schema] = true
			out = append(out, t.Schema)
		}
	}
	sort.Strings(out)
	return out, s, nil
}

func (h *handler) showDatabases(ctx context.Context) (*mysql.Result, error) {
	dbs, _, err := h.schemas(ctx)
	if err != nil {
		return nil, err
	}
	return textResult([]string{"Database"}, dbs)
}

func (h *handler) showTables(ctx context.Context, p parsed) (*mysql.Result, error) {
	db := p.arg
	if db == "" {
		db = h.db
	}
	if db == "" {
		return nil, errRefused(mysql.ER_NO_DB_ERROR, "No database selected")
	}
	_, s, err := h.schemas(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range s.Tables() {
		if t.Schema == db {
			names = append(names, t.Table)
		}
	}
	sort.Strings(names)
	return tablesResult(db, names, p), nil
}

// textResult is a one-column text answer.
func textResult(name []string, vals []string) (*mysql.Result, error) {
	rows := make([][]*string, len(vals))
	for i := range vals {
		rows[i] = []*string{&vals[i]}
	}
	return stringResult(name, rows), nil
}

// stringResult is an answer of text columns (a nil value is NULL).
func stringResult(names []string, rows [][]*string) *mysql.Result {
	rs := mysql.NewResultset(len(names))
	for i, n := range names {
		rs.Fields[i] = &mysql.Field{Name: []byte(n), OrgName: []byte(n), Charset: charsetUTF8MB4, Type: mysql.MYSQL_TYPE_VAR_STRING, ColumnLength: 1 << 16}
	}
	for _, r := range rows {
		var row []byte
		for _, v := range r {
			if v == nil {
				row = append(row, 0xfb)
				continue
			}
			row = append(row, mysql.PutLengthEncodedString([]byte(*v))...)
		}
		rs.RowDatas = append(rs.RowDatas, row)
	}
	return mysql.NewResult(rs)
}

// HandleOtherCommand refuses every other command, naming it.
func (h *handler) HandleOtherCommand(cmd byte, data []byte) error {
	return errRefused(mysql.ER_UNKNOWN_COM_ERROR, "command %d is not supported by the dbtrail SQL port", cmd)
}
