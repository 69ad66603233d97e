package schema

import (
	"strings"

	"errors"
	"fmt"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser
)

// ChangeKind says what a DDL statement did to the catalog.
type ChangeKind string

const (
	// ChangeNone: no table definition changed (not DDL on tables, a
	// temporary table, CREATE TABLE IF NOT EXISTS on an existing table, an
	// ALTER that changes nothing dbtrail keeps, CREATE/ALTER DATABASE).
	ChangeNone ChangeKind = "none"
	// ChangeCreate: a table was created; TableChange.Old is set when CREATE
	// OR REPLACE replaced one.
	ChangeCreate ChangeKind = "create"
	// ChangeAlter: definitions changed (ALTER TABLE, CREATE/DROP INDEX). An
	// ALTER that also renamed sets OldSchema/OldName.
	ChangeAlter ChangeKind = "alter"
	// ChangeDrop: tables were dropped; TableChange.New is nil.
	ChangeDrop ChangeKind = "drop"
	// ChangeRename: tables were renamed and nothing else changed (RENAME
	// TABLE, ALTER TABLE ... RENAME TO).
	ChangeRename ChangeKind = "rename"
	// ChangeTruncate: rows vanished without row events (TRUNCATE, ALTER
	// TABLE DROP/TRUNCATE/EXCHANGE PARTITION, IMPORT TABLESPACE). Old and
	// New are the same definition.
	ChangeTruncate ChangeKind = "truncate"
	// ChangeDropSchema: DROP DATABASE; Tables lists the tables dropped with it.
	ChangeDropSchema ChangeKind = "drop_schema"
)

// TableChange is what one statement did to one table.
type TableChange struct {
	// Schema and Name name the table after the statement (for a drop, the
	// table dropped).
	Schema string
	Name   string
	// OldSchema and OldName are the name before a rename; empty otherwise.
	OldSchema string
	OldName   string
	Old       *Table // nil when the table is new
	New       *Table // nil when the table was dropped
}

// Change is the effect of one statement on a Catalog.
type Change struct {
	Kind   ChangeKind
	Tables []TableChange
	// Parsed is false only when the statement could not be parsed or
	// modelled; the error is then an *UnparsedDDLError.
	Parsed bool
	// Unknown lists the tables (schema.table) the statement acts on that the
	// catalog does not hold; nothing was recorded for them, so their next
	// definition must come from elsewhere (the table map).
	Unknown []string
	// Schema and SchemaCharset are set by CREATE/ALTER/DROP DATABASE: the
	// schema and its default charset after the statement ("" when dropped).
	Schema        string
	SchemaCharset string
}

// UnparsedDDLError says a statement that may change table definitions could
// not be understood. The catalog is unchanged; the caller falls back to the
// definitions carried by the binlog's table map events.
type UnparsedDDLError struct {
	Stmt   string
	Reason string
}

func (e *UnparsedDDLError) Error() string {
	return fmt.Sprintf("cannot parse DDL statement %q: %s", abbreviate(e.Stmt, 300), e.Reason)
}

// DDLError says a parsed statement cannot apply to the catalog (a column it
// names does not exist, ...): the catalog and the server have diverged. The
// catalog is unchanged.
type DDLError struct {
	Stmt  string
	Table string // schema.table, "" when the statement names none
	Err   error
}

func (e *DDLError) Error() string {
	if e.Table == "" {
		return fmt.Sprintf("DDL statement %q: %v", abbreviate(e.Stmt, 300), e.Err)
	}
	return fmt.Sprintf("DDL statement %q on table %s: %v", abbreviate(e.Stmt, 300), e.Table, e.Err)
}

func (e *DDLError) Unwrap() error { return e.Err }

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

var errNoSchema = errors.New("no schema named and the event has no default database")

var parsers = sync.Pool{New: func() any { return parser.New() }}

// ApplyDDL applies one statement from a binlog QUERY event to cat, where
// defaultSchema is the event's current database (for unqualified names).
// Statements that cannot change a table definition return
// Change{Kind: ChangeNone, Parsed: true} without being parsed. On error the
// catalog is left exactly as it was: *UnparsedDDLError when the statement
// cannot be parsed or modelled (fall back to table maps), *DDLError when it
// contradicts the catalog. Tables named but unknown to the catalog are
// skipped and listed in Change.Unknown. The statement is assumed to have
// succeeded on the server (the binlog logs only those).
func ApplyDDL(cat *Catalog, defaultSchema, stmt string) (Change, error) {
	p := prepare(stmt)
	a := &applier{cat: cat, db: defaultSchema, stmt: stmt, p: p, staged: map[tableKey]*Table{}}
	switch p.kind {
	case stmtOther:
		return Change{Kind: ChangeNone, Parsed: true}, nil
	case stmtCreateDB, stmtAlterDB, stmtDropDB:
		return a.database()
	}
	if p.unsupported != "" {
		return Change{}, &UnparsedDDLError{Stmt: stmt, Reason: p.unsupported + " is not supported"}
	}
	node, err := parseOne(p.sql)
	if err != nil && p.retry != "" {
		if n2, err2 := parseOne(p.retry); err2 == nil {
			node, err = n2, nil
		}
	}
	if err != nil {
		return Change{}, &UnparsedDDLError{Stmt: stmt, Reason: err.Error()}
	}
	var ch Change
	switch n := node.(type) {
	case *ast.CreateTableStmt:
		ch, err = a.createTable(n)
	case *ast.DropTableStmt:
		ch, err = a.dropTable(n)
	case *ast.TruncateTableStmt:
		ch, err = a.truncate(n)
	case *ast.RenameTableStmt:
		ch, err = a.rename(n)
	case *ast.AlterTableStmt:
		ch, err = a.alterTable(n)
	case *ast.CreateIndexStmt:
		ch, err = a.createIndex(n)
	case *ast.DropIndexStmt:
		ch, err = a.dropIndex(n)
	default:
		return Change{Kind: ChangeNone, Parsed: true}, nil
	}
	if err != nil {
		var u *UnparsedDDLError
		if errors.As(err, &u) {
			return Change{}, err
		}
		var d *DDLError
		if !errors.As(err, &d) {
			err = &DDLError{Stmt: stmt, Err: err}
		}
		return Change{Parsed: true}, err
	}
	a.commit()
	ch.Parsed = true
	return ch, nil
}

// parseOne parses exactly one statement.
func parseOne(sql string) (ast.StmtNode, error) {
	n, err := parseOnce(sql)
	if err == nil {
		return n, nil
	}
	if q, ok := quoteTiDBWords(sql); ok {
		if n2, err2 := parseOnce(q); err2 == nil {
			return n2, nil
		}
	}
	return nil, err
}

// tidbOnlyWords are words the TiDB parser reserves (window functions and a
// few more) that MariaDB takes as plain identifiers: a MariaDB column
// named rank or lead is written unquoted in its DDL.
var tidbOnlyWords = map[string]bool{
	"lead": true, "lag": true, "rank": true, "dense_rank": true, "row_number": true, "ntile": true,
	"first_value": true, "last_value": true, "nth_value": true, "cume_dist": true, "percent_rank": true,
	"groups": true, "lateral": true, "array": true, "tablesample": true, "ilike": true,
}

// quoteTiDBWords backquotes every unquoted tidbOnlyWords word of sql that
// is not called as a function (followed by "("), so that the TiDB parser
// reads it as the identifier MariaDB took it for; ok is false when there
// is none. A statement whose parse this changes is parsed again from the
// result, and every consumer checks the parsed table against the binlog's
// (capture's table map check, the reshape planner's definition check).
func quoteTiDBWords(sql string) (string, bool) {
	toks := tokenize(sql)
	changed := false
	for i, t := range toks {
		if t.kind != tkWord || !tidbOnlyWords[strings.ToLower(t.text)] || calledAt(toks, i) {
			continue
		}
		toks[i].text = "`" + t.text + "`"
		changed = true
	}
	if !changed {
		return "", false
	}
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
	}
	return b.String(), true
}

// calledAt reports whether the word at toks[i] is followed by "(", past
// white space and comments.
func calledAt(toks []token, i int) bool {
	for _, t := range toks[i+1:] {
		if t.kind == tkSpace || t.kind == tkComment {
			continue
		}
		return t.kind == tkPunct && t.text == "("
	}
	return false
}

// parseOnce parses sql, which must hold one statement.
func parseOnce(sql string) (ast.StmtNode, error) {
	p := parsers.Get().(*parser.Parser)
	defer parsers.Put(p)
	stmts, _, err := p.Parse(sql, "", "")
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%d statements in one event", len(stmts))
	}
	return stmts[0], nil
}

// applier stages the effect of one statement over a catalog; commit makes it
// visible, so a failing statement leaves the catalog untouched.
type applier struct {
	cat    *Catalog
	db     string
	stmt   string
	p      *prepared
	staged map[tableKey]*Table // nil value: deleted
	order  []tableKey
}

func (a *applier) get(k tableKey) (*Table, bool) {
	if t, ok := a.staged[k]; ok {
		return t, t != nil
	}
	return a.cat.Get(k.schema, k.name)
}

func (a *applier) stage(k tableKey, t *Table) {
	if _, ok := a.staged[k]; !ok {
		a.order = append(a.order, k)
	}
	a.staged[k] = t
}

func (a *applier) commit() {
	for _, k := range a.order {
		if t := a.staged[k]; t != nil {
			a.cat.Put(t)
		} else {
			a.cat.Delete(k.schema, k.name)
		}
	}
}

// key resolves a table name against the default schema.
func (a *applier) key(n *ast.TableName) (tableKey, error) {
	k := tableKey{n.Schema.O, n.Name.O}
	if k.schema == "" {
		k.schema = a.db
	}
	if k.schema == "" {
		return k, &DDLError{Stmt: a.stmt, Err: fmt.Errorf("table %q has no schema and the event has no default database", k.name)}
	}
	return k, nil
}

func (k tableKey) String() string { return k.schema + "." + k.name }

func (a *applier) fail(k tableKey, format string, args ...any) error {
	return &DDLError{Stmt: a.stmt, Table: k.String(), Err: fmt.Errorf(format, args...)}
}
