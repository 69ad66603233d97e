package sqlport

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/stmt"

	"github.com/dbtrail/dbtrail/internal/views"
)

// prepared is a statement COM_STMT_PREPARE took: its text and how many
// parameters (?) it has.
type prepared struct {
	query  string
	params int
}

// HandleStmtPrepare is COM_STMT_PREPARE: the statement's parameters are
// counted (each ? outside a string, an identifier and a comment) and its
// columns told where they can be known (describe); it is checked and run
// at COM_STMT_EXECUTE, whose answer carries its own columns. The
// statement's context for go-mysql is a stmt.PreparedStmt (the columns'
// fields), which names the prepared statement in h.stmts.
func (h *handler) HandleStmtPrepare(query string) (int, int, any, error) {
	n, err := countParams(query)
	if err != nil {
		return 0, 0, nil, errRefused(mysql.ER_PARSE_ERROR, "%v", err)
	}
	ps := &stmt.PreparedStmt{Params: n}
	for _, f := range h.describe(query, n) {
		ps.RawColumnFields = append(ps.RawColumnFields, f.Dump())
	}
	ps.Columns = len(ps.RawColumnFields)
	if h.stmts == nil {
		h.stmts = map[*stmt.PreparedStmt]*prepared{}
	}
	h.stmts[ps] = &prepared{query: query, params: n}
	return n, ps.Columns, ps, nil
}

// describe is the columns a prepared statement's answer will have: a
// read's from DuckDB (the statement translated, its parameters NULL, run
// as a subquery under LIMIT 0), the port's own SHOW and variable
// statements' from their answer; none for another statement (SET, USE)
// or one whose columns cannot be known now (an error: its execution
// tells it).
func (h *handler) describe(query string, params int) []*mysql.Field {
	var fields []*mysql.Field
	_, err := h.run(func(ctx context.Context) (*mysql.Result, error) {
		p, err := classify(query)
		if err != nil {
			return nil, err
		}
		switch p.kind {
		case kindSelect:
			fields, err = h.describeRead(ctx, p.sql, params)
			return nil, err
		case kindVariable, kindShowMeta, kindShowDatabases, kindShowTables, kindShowColumns:
			text, err := withLiterals(query, make([]any, params))
			if err != nil {
				return nil, err
			}
			res, err := h.query(ctx, text)
			if err == nil && res != nil && res.Resultset != nil {
				fields = res.Resultset.Fields
			}
			return nil, err
		}
		return nil, nil
	})
	if err != nil {
		h.cfg.Log.Debug("sql port: prepared statement's columns not known at prepare", "user", h.user, "err", err)
		return nil
	}
	return fields
}

// describeRead is the fields of read text's (a kindSelect's DuckDB text)
// answer, as its execution sends them (h.columns).
func (h *handler) describeRead(ctx context.Context, text string, params int) ([]*mysql.Field, error) {
	s, err := h.session(ctx)
	if err != nil {
		return nil, err
	}
	q, err := h.rewriteRead(ctx, s, text)
	if err != nil {
		return nil, err
	}
	q = strings.TrimRight(strings.TrimSpace(q), "; \t\r\n")
	cts, err := columnTypes(ctx, s, q, make([]any, params)...)
	if err != nil {
		return nil, err
	}
	cols, err := h.columns(ctx, s, text, cts)
	if err != nil {
		return nil, err
	}
	fields := make([]*mysql.Field, len(cols))
	for i := range cols {
		fields[i] = cols[i].field
	}
	return fields, nil
}

// HandleStmtExecute is COM_STMT_EXECUTE: a read is run with its
// parameters bound by DuckDB (never written into its text); any other
// statement the port answers itself (SET, SHOW, USE, variables) takes its
// parameters as MySQL literals (literal). The answer's rows are in the
// binary protocol.
func (h *handler) HandleStmtExecute(ctx any, query string, args []any) (*mysql.Result, error) {
	ps, _ := ctx.(*stmt.PreparedStmt)
	p, ok := h.stmts[ps]
	if !ok || len(args) != p.params {
		return nil, errRefused(mysql.ER_WRONG_ARGUMENTS, "COM_STMT_EXECUTE: the statement was not prepared, or takes another number of parameters than %d", len(args))
	}
	return h.run(func(ctx context.Context) (*mysql.Result, error) { return h.execute(ctx, query, args) })
}

// HandleStmtClose forgets the prepared statement.
func (h *handler) HandleStmtClose(ctx any) error {
	if ps, ok := ctx.(*stmt.PreparedStmt); ok {
		delete(h.stmts, ps)
	}
	return nil
}

// run runs fn under the statement's time limit; an error is a MySQL
// error: the port's own, 1317 past the limit, 1290 for a statement the
// session refuses (a write, a file or setting the sandbox denies), else
// 1105 with the reason.
func (h *handler) run(fn func(context.Context) (*mysql.Result, error)) (*mysql.Result, error) {
	ctx, done := h.inflight.start(h.ctx)
	defer done()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	res, err := fn(ctx)
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
	if views.IsRefused(err) {
		return nil, errRefused(mysql.ER_OPTION_PREVENTS_STATEMENT, "%v", err)
	}
	return nil, errRefused(mysql.ER_UNKNOWN_ERROR, "%v", err)
}

// execute runs a prepared statement with args: a read on DuckDB, its
// parameters bound; anything else as COM_QUERY with them as literals.
func (h *handler) execute(ctx context.Context, query string, args []any) (*mysql.Result, error) {
	p, err := classify(query)
	if err != nil || p.kind != kindSelect {
		// The port's own statements are told apart with their
		// parameters as literals (SET @@dbtrail_at = ?).
		text, err := withLiterals(query, args)
		if err != nil {
			return nil, errRefused(mysql.ER_WRONG_ARGUMENTS, "%v", err)
		}
		res, err := h.query(ctx, text)
		if err != nil || res == nil || res.Resultset == nil {
			return res, err
		}
		return res, binaryResult(res.Resultset)
	}
	bound := make([]any, len(args))
	for i, a := range args {
		bound[i] = bindValue(a)
	}
	s, err := h.session(ctx)
	if err != nil {
		return nil, err
	}
	q, err := h.rewriteRead(ctx, s, p.sql)
	if err != nil {
		return nil, err
	}
	rows, _, err := s.Query(ctx, q, bound...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	rs, err := h.answer(ctx, s, p.sql, rows, true)
	if err != nil {
		return nil, err
	}
	return mysql.NewResult(rs), nil
}

// bindValue is a parameter as DuckDB binds it: text as a string (bytes
// that are not UTF-8 as a BLOB), numbers as they are.
func bindValue(a any) any {
	switch v := a.(type) {
	case mysql.TypedBytes:
		return bytesValue(v.Bytes)
	case []byte:
		return bytesValue(v)
	}
	return a
}

func bytesValue(b []byte) any {
	if utf8.Valid(b) {
		return string(b)
	}
	return append([]byte(nil), b...)
}

// withLiterals is query with each parameter written as a MySQL literal:
// NULL, a number, a string with every quote, backslash and control byte
// escaped, or bytes that are not UTF-8 in hex (X'…').
func withLiterals(query string, args []any) (string, error) {
	var b strings.Builder
	i := 0
	err := scanSQL(query, func(text string, param bool) {
		if !param {
			b.WriteString(text)
			return
		}
		b.WriteString(literal(args[i]))
		i++
	})
	return b.String(), err
}

// literal is a as a MySQL literal.
func literal(a any) string {
	switch v := bindValue(a).(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + escapeString(v) + "'"
	case []byte:
		return "X'" + hex.EncodeToString(v) + "'"
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		return "'" + v.Format("2006-01-02 15:04:05.999999") + "'"
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return fmt.Sprint(v)
	}
	return "'" + escapeString(fmt.Sprint(a)) + "'"
}

// escapeString escapes s for a single-quoted MySQL string.
func escapeString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`, "\x1a", `\Z`)
	return r.Replace(s)
}

// countParams counts the parameters of query.
func countParams(query string) (int, error) {
	n := 0
	err := scanSQL(query, func(_ string, param bool) {
		if param {
			n++
		}
	})
	return n, err
}

// scanSQL walks query, handing fn its text between parameters and each
// parameter (a ? outside a string, a quoted identifier and a comment). A
// string, identifier or comment left open is an error.
func scanSQL(query string, fn func(text string, param bool)) error {
	start := 0
	for i := 0; i < len(query); i++ {
		var end int
		var err error
		switch c := query[i]; {
		case c == '\'' || c == '"':
			end, err = literalEnd(query, i)
		case c == '`':
			end, err = identEnd(query, i)
		case c == '#' || c == '-' && strings.HasPrefix(query[i:], "-- "):
			end = strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - 1
			} else {
				end += i
			}
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return fmt.Errorf("the comment opened at byte %d is not closed", i)
			}
			end = i + 2 + j + 1
		case c == '?':
			fn(query[start:i], false)
			fn("?", true)
			start = i + 1
			continue
		default:
			continue
		}
		if err != nil {
			return err
		}
		i = end
	}
	fn(query[start:], false)
	return nil
}
