package sqlport

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// handler answers one connection's commands (server.Handler). It holds the
// connection's views session, opened at the first statement that reads and
// reopened when SET @@dbtrail_at moves it.
type handler struct {
	cfg  *Config
	ctx  context.Context
	user string
	db   string
	at   moment.At // zero: latest
	sess *views.Session
	st   *tail.State // the prepared tail the session answers at, with a tail
	// cache is the port's staged tables; pins the ones the session reads.
	cache *stageCache
	pins  map[string]*staged
	named map[string]bool // tables statements at this cut named, not staged
	// id is the connection's id (CONNECTION_ID(), KILL); conns the port's
	// connections; run the statement in progress, for KILL QUERY;
	// closeConn ends the connection (KILL CONNECTION).
	id        uint32
	conns     *conns
	run       running
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

// UseDB is USE / COM_INIT_DB: a schema of the views.
func (h *handler) UseDB(db string) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.Timeout)
	defer cancel()
	s, err := h.session(ctx)
	if err != nil {
		return errRefused(mysql.ER_UNKNOWN_ERROR, "%v", err)
	}
	for _, t := range s.Tables() {
		if t.Schema == db {
			h.db = db
			return nil
		}
	}
	return errRefused(mysql.ER_BAD_DB_ERROR, "Unknown database '%s'", db)
}

// HandleQuery answers one COM_QUERY statement.
func (h *handler) HandleQuery(query string) (*mysql.Result, error) {
	ctx, done := h.run.start(h.ctx)
	defer done()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	res, err := h.query(ctx, query)
	if err == nil {
		return res, nil
	}
	var my *mysql.MyError
	if errors.As(err, &my) {
		return nil, my
	}
	if ctx.Err() != nil {
		return nil, h.interruptedError(ctx)
	}
	return nil, errRefused(mysql.ER_UNKNOWN_ERROR, "%v", err)
}

func (h *handler) query(ctx context.Context, query string) (*mysql.Result, error) {
	if m := killStmt.FindStringSubmatch(query); m != nil {
		return nil, h.kill(m)
	}
	if connectionID.MatchString(query) {
		return h.connectionIDResult()
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
		return nil, nil
	case kindSetAt:
		return nil, h.setAt(ctx, p.arg)
	case kindUse:
		return nil, h.UseDB(p.arg)
	case kindVariable:
		return h.variables(ctx, p.vars)
	case kindShowDatabases:
		return h.showDatabases(ctx)
	case kindShowTables:
		return h.showTables(ctx, p.arg)
	case kindShowColumns:
		return h.showColumns(ctx, p.arg)
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
	rows, _, err := s.QueryAfter(ctx, p.sql, func(ctx context.Context, names []string) error { return h.stageTables(ctx, s, names) })
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	rs, err := resultset(rows, h.cfg.MaxRows)
	if err != nil {
		return nil, err
	}
	if err := h.checkBytes(rs); err != nil {
		return nil, err
	}
	return mysql.NewResult(rs), nil
}

// setAt moves the session to moment text (moment.ParseAt): the session
// is reopened at it now, so a moment that cannot be answered is refused
// here, with the reason, and the session stays where it was.
func (h *handler) setAt(ctx context.Context, text string) error {
	if h.cfg.Tail == nil {
		return errRefused(mysql.ER_WRONG_VALUE_FOR_VAR, "dbtrail_at needs the index: this port reads the current snapshot alone")
	}
	at, err := moment.ParseAt(text)
	if err != nil {
		return errRefused(mysql.ER_WRONG_VALUE_FOR_VAR, "dbtrail_at: %v", err)
	}
	if at.Kind == moment.KindLatest {
		at = moment.At{}
	}
	old, oldAt, oldSt := h.sess, h.at, h.st
	h.sess, h.at = nil, at
	if _, err := h.session(ctx); err != nil {
		h.sess, h.at, h.st = old, oldAt, oldSt
		return errRefused(mysql.ER_WRONG_VALUE_FOR_VAR, "dbtrail_at %s: %v", text, err)
	}
	h.unpin()
	if old != nil {
		old.Close()
	}
	return nil
}

// variables answers SELECT @@name, …: the ones clients send first, and
// dbtrail_at and dbtrail_cut.
func (h *handler) variables(ctx context.Context, vars []string) (*mysql.Result, error) {
	names := make([]string, len(vars))
	row := make([]any, len(vars))
	for i, v := range vars {
		names[i] = "@@" + v
		switch v {
		case "version":
			row[i] = ServerVersion
		case "version_comment":
			row[i] = "dbtrail time-travel SQL port (read-only)"
		case "max_allowed_packet":
			row[i] = int64(mysql.MaxPayloadLen)
		case "autocommit", "auto_increment_increment":
			row[i] = int64(1)
		case "tx_isolation", "transaction_isolation":
			row[i] = "REPEATABLE-READ"
		case "tx_read_only", "transaction_read_only", "read_only":
			row[i] = int64(1)
		case "character_set_client", "character_set_connection", "character_set_results", "character_set_server":
			row[i] = "utf8mb4"
		case "collation_connection", "collation_server":
			row[i] = "utf8mb4_general_ci"
		case "time_zone", "system_time_zone":
			row[i] = "UTC"
		case "sql_mode":
			row[i] = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES"
		case "lower_case_table_names":
			row[i] = int64(0)
		case "dbtrail_at":
			row[i] = "latest"
			if h.at.Kind != "" {
				row[i] = h.at.String()
			}
		case "dbtrail_cut":
			cut, err := h.cut(ctx)
			if err != nil {
				return nil, err
			}
			row[i] = cut
		default:
			return nil, errRefused(mysql.ER_UNKNOWN_SYSTEM_VARIABLE, "Unknown system variable '%s'", v)
		}
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

func (h *handler) showTables(ctx context.Context, db string) (*mysql.Result, error) {
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
	return textResult([]string{"Tables_in_" + db}, names)
}

// showColumns is SHOW COLUMNS / DESCRIBE: Field, Type, Null, Key, Default,
// Extra of the view's columns (their DuckDB types named as MySQL's).
func (h *handler) showColumns(ctx context.Context, name string) (*mysql.Result, error) {
	schemaName, table, ok := strings.Cut(name, ".")
	if !ok {
		schemaName, table = h.db, name
	}
	if schemaName == "" {
		return nil, errRefused(mysql.ER_NO_DB_ERROR, "No database selected")
	}
	s, err := h.session(ctx)
	if err != nil {
		return nil, err
	}
	var ref *views.TableRef
	for i, t := range s.Tables() {
		if t.Schema == schemaName && t.Table == table {
			ref = &s.Tables()[i]
		}
	}
	if ref == nil {
		return nil, errRefused(mysql.ER_NO_SUCH_TABLE, "Table '%s.%s' doesn't exist", schemaName, table)
	}
	rows, _, err := s.Query(ctx, fmt.Sprintf("SELECT * FROM %s.%s LIMIT 0", views.QuoteIdent(schemaName), views.QuoteIdent(table)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	values := make([][]*string, len(cts))
	yes, empty := "YES", ""
	for i, ct := range cts {
		name, typ := ct.Name(), mysqlTypeName(ct.DatabaseTypeName())
		values[i] = []*string{&name, &typ, &yes, &empty, nil, &empty}
	}
	return stringResult([]string{"Field", "Type", "Null", "Key", "Default", "Extra"}, values), nil
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

// HandleFieldList is COM_FIELD_LIST: refused (deprecated, sent by the old
// mysql client's table-name completion only).
func (h *handler) HandleFieldList(table, wildcard string) ([]*mysql.Field, error) {
	return nil, errRefused(mysql.ER_NOT_SUPPORTED_YET, "COM_FIELD_LIST is not supported by the dbtrail SQL port yet: use SHOW COLUMNS")
}

// HandleStmtPrepare refuses prepared statements (not built yet).
func (h *handler) HandleStmtPrepare(query string) (int, int, any, error) {
	return 0, 0, nil, errRefused(mysql.ER_NOT_SUPPORTED_YET, "prepared statements are not supported by the dbtrail SQL port yet: send the statement as text (go-sql-driver: interpolateParams=true)")
}

// HandleStmtExecute is never reached: no statement is prepared.
func (h *handler) HandleStmtExecute(context any, query string, args []any) (*mysql.Result, error) {
	return nil, errRefused(mysql.ER_NOT_SUPPORTED_YET, "prepared statements are not supported by the dbtrail SQL port yet")
}

// HandleStmtClose has nothing to close.
func (h *handler) HandleStmtClose(context any) error { return nil }

// HandleOtherCommand refuses every other command, naming it.
func (h *handler) HandleOtherCommand(cmd byte, data []byte) error {
	return errRefused(mysql.ER_UNKNOWN_COM_ERROR, "command %d is not supported by the dbtrail SQL port", cmd)
}
