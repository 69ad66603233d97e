// Package sqlport is the time-travel SQL port: a read-only MySQL protocol
// server (go-mysql's server package) in front of the DuckDB views of one
// source's backup folder (internal/views), at the live tail or at a moment
// a session sets with SET @@dbtrail_at (internal/tail). It owns its
// listener, its connections and the translation of the MySQL SQL clients
// send into DuckDB SQL (docs/sql-port.md).
package sqlport

import (
	"fmt"
	"regexp"
	"strings"
)

// kind is what a statement asks of the port.
type kind int

const (
	kindSelect   kind = iota // a read, run on DuckDB after translation
	kindWrite                // refused with ER_OPTION_PREVENTS_STATEMENT
	kindSetAt                // SET @@dbtrail_at = '…'
	kindSetOther             // SET NAMES, time_zone, character_set_results (handler.set); other settings: accepted, no effect
	kindUse                  // USE db
	kindShowDatabases
	kindShowTables
	kindShowColumns
	kindVariable // SELECT @@name[, @@name…] answered by the port
	kindShowMeta // SHOW VARIABLES, STATUS, WARNINGS, ENGINES, CHARSET, COLLATION… (variables.go)
)

// parsed is one statement classified.
type parsed struct {
	kind kind
	// arg is SET @@dbtrail_at's moment, USE's and SHOW TABLES FROM's
	// schema, SHOW COLUMNS' table (schema.table or table).
	arg string
	// vars are the variables of a kindVariable, as written (lower case,
	// without @@ and session./global.).
	vars []string
	// sql is a kindSelect's DuckDB text.
	sql string
	// like is a kindShowMeta's or kindShowTables' LIKE pattern (its
	// literal's body), or "".
	like string
	// full is SHOW FULL TABLES (with a Table_type column).
	full bool
}

var (
	writeWords  = regexp.MustCompile(`(?is)^\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|ALTER|DROP|TRUNCATE|RENAME|LOAD|GRANT|REVOKE|LOCK|UNLOCK|CALL|HANDLER|DO|IMPORT|INSTALL|UNINSTALL|OPTIMIZE|REPAIR|ANALYZE|FLUSH|PURGE|RESET|CHANGE|START\s+(REPLICA|SLAVE)|STOP\s+(REPLICA|SLAVE)|KILL|SHUTDOWN)\b`)
	intoOutfile = regexp.MustCompile(`(?is)\bINTO\s+(OUTFILE|DUMPFILE|@)`)
	setAt       = regexp.MustCompile(`(?is)^\s*SET\s+(?:@@(?:SESSION\.)?|SESSION\s+)?dbtrail_at\s*(?:=|:=)\s*'((?:[^'\\]|'')*)'\s*;?\s*$`)
	setAny      = regexp.MustCompile(`(?is)^\s*SET\s+`)
	txnControl  = regexp.MustCompile(`(?is)^\s*(COMMIT|ROLLBACK|BEGIN|START\s+TRANSACTION)\b[^;]*;?\s*$`)
	use         = regexp.MustCompile("(?is)^\\s*USE\\s+(?:`((?:[^`]|``)+)`|([^`;\\s@]*@'[^']*')|([^`;\\s]+))\\s*;?\\s*$")
	showDBs     = regexp.MustCompile(`(?is)^\s*SHOW\s+(DATABASES|SCHEMAS)\s*;?\s*$`)
	showTables  = regexp.MustCompile("(?is)^\\s*SHOW\\s+(FULL\\s+)?TABLES(?:\\s+(?:FROM|IN)\\s+`?([^`;\\s]+)`?)?(?:\\s+LIKE\\s+'((?:[^'\\\\]|\\\\.|'')*)')?\\s*;?\\s*$")
	showColumns = regexp.MustCompile("(?is)^\\s*(?:SHOW\\s+(?:FULL\\s+)?(?:COLUMNS|FIELDS)\\s+(?:FROM|IN)|DESCRIBE|DESC)\\s+`?([^`;\\s.]+)`?(?:\\.`?([^`;\\s]+)`?)?\\s*;?\\s*$")
	variables   = regexp.MustCompile(`(?is)^\s*SELECT\s+(@@(?:session\.|global\.)?[a-z_]+(?:\s*,\s*@@(?:session\.|global\.)?[a-z_]+)*)\s*;?\s*$`)
	limitComma  = regexp.MustCompile(`(?is)\bLIMIT\s+(\d+)\s*,\s*(\d+)`)
)

// classify parses stmt: the port's own statements, a write to refuse, or a
// read translated to DuckDB.
func classify(stmt string) (parsed, error) {
	stmt = leadingComments(stmt)
	switch {
	case writeWords.MatchString(stmt), intoOutfile.MatchString(stmt):
		return parsed{kind: kindWrite}, nil
	}
	if txnControl.MatchString(stmt) {
		// A read-only port has no transaction to begin or end: each
		// statement reads one cut (clients with autocommit off send these).
		return parsed{kind: kindSetOther}, nil
	}
	if m := setAt.FindStringSubmatch(stmt); m != nil {
		return parsed{kind: kindSetAt, arg: strings.ReplaceAll(m[1], "''", "'")}, nil
	}
	if setAny.MatchString(stmt) {
		if strings.Contains(strings.ToLower(stmt), "dbtrail_at") {
			return parsed{}, fmt.Errorf("SET @@dbtrail_at takes one quoted moment: SET @@dbtrail_at = 'T' (a time, seq:N, file:pos, a GTID or latest)")
		}
		return parsed{kind: kindSetOther, arg: stmt}, nil
	}
	if m := use.FindStringSubmatch(stmt); m != nil {
		return parsed{kind: kindUse, arg: strings.ReplaceAll(m[1], "``", "`") + m[2] + m[3]}, nil
	}
	if m := showMeta.FindStringSubmatch(stmt); m != nil {
		what := strings.Join(strings.Fields(m[1]), " ")
		return parsed{kind: kindShowMeta, arg: what, like: m[2]}, nil
	}
	if m := showWhere.FindStringSubmatch(stmt); m != nil {
		stmt = showWhereSelect(m[1], m[2])
	}
	if showDBs.MatchString(stmt) {
		return parsed{kind: kindShowDatabases}, nil
	}
	if m := showTables.FindStringSubmatch(stmt); m != nil {
		return parsed{kind: kindShowTables, arg: m[2], like: m[3], full: m[1] != ""}, nil
	}
	if m := showColumns.FindStringSubmatch(stmt); m != nil {
		name := m[1]
		if m[2] != "" {
			name += "." + m[2]
		}
		return parsed{kind: kindShowColumns, arg: name}, nil
	}
	if m := variables.FindStringSubmatch(stmt); m != nil {
		var vars []string
		for _, v := range strings.Split(m[1], ",") {
			v = strings.ToLower(strings.TrimSpace(v))
			v = strings.TrimPrefix(v, "@@")
			v = strings.TrimPrefix(strings.TrimPrefix(v, "session."), "global.")
			vars = append(vars, v)
		}
		return parsed{kind: kindVariable, vars: vars}, nil
	}
	sql, err := translate(stmt)
	if err != nil {
		return parsed{}, err
	}
	return parsed{kind: kindSelect, sql: sql}, nil
}

// leadingComments is stmt without the comments before its first word
// (drivers prefix one: Connector/J's version comment), so the port's own
// statements and the write refusal see that word. A statement that is one
// MySQL executable comment (/*!40101 SET NAMES utf8 */) is its content.
func leadingComments(stmt string) string {
	for {
		s := strings.TrimLeft(stmt, " \t\r\n")
		switch {
		case strings.HasPrefix(s, "/*!"):
			end := strings.Index(s, "*/")
			if end < 0 {
				return s
			}
			body := strings.TrimLeft(s[3:end], "0123456789")
			stmt = body + " " + s[end+2:]
		case strings.HasPrefix(s, "/*"):
			end := strings.Index(s, "*/")
			if end < 0 {
				return s
			}
			stmt = s[end+2:]
		case strings.HasPrefix(s, "-- "), strings.HasPrefix(s, "#"):
			end := strings.IndexByte(s, '\n')
			if end < 0 {
				return ""
			}
			stmt = s[end+1:]
		default:
			return s
		}
	}
}

// translate turns MySQL read SQL into DuckDB's: backtick identifiers
// become double-quoted ones (outside string literals), LIMIT a,b becomes
// LIMIT b OFFSET a, and a trailing ';' is dropped. A string or identifier
// left open is an error naming it.
func translate(stmt string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch c {
		case '\'', '"':
			j, err := literalEnd(stmt, i)
			if err != nil {
				return "", err
			}
			b.WriteString("'" + strings.ReplaceAll(unescape(stmt[i+1:j], c), "'", "''") + "'")
			i = j
		case '`':
			j, err := identEnd(stmt, i)
			if err != nil {
				return "", err
			}
			name := strings.ReplaceAll(stmt[i+1:j], "``", "`")
			b.WriteString(`"` + strings.ReplaceAll(name, `"`, `""`) + `"`)
			i = j
		default:
			b.WriteByte(c)
		}
	}
	out := strings.TrimRight(strings.TrimSpace(b.String()), ";")
	return limitComma.ReplaceAllString(out, "LIMIT $2 OFFSET $1"), nil
}

// literalEnd is the index of the quote that closes the literal opened at
// stmt[i] (a doubled quote or a backslash escape stays inside).
func literalEnd(stmt string, i int) (int, error) {
	q := stmt[i]
	for j := i + 1; j < len(stmt); j++ {
		switch stmt[j] {
		case '\\':
			j++
		case q:
			if j+1 < len(stmt) && stmt[j+1] == q {
				j++
				continue
			}
			return j, nil
		}
	}
	return 0, fmt.Errorf("the string opened with %c at byte %d is not closed", q, i)
}

// identEnd is the index of the backtick that closes the identifier opened
// at stmt[i] (a doubled backtick stays inside).
func identEnd(stmt string, i int) (int, error) {
	for j := i + 1; j < len(stmt); j++ {
		if stmt[j] == '`' {
			if j+1 < len(stmt) && stmt[j+1] == '`' {
				j++
				continue
			}
			return j, nil
		}
	}
	return 0, fmt.Errorf("the identifier opened with ` at byte %d is not closed", i)
}

// escapes are MySQL's backslash escapes in a string literal.
var escapes = map[byte]string{'0': "\x00", 'b': "\b", 'n': "\n", 'r': "\r", 't': "\t", 'Z': "\x1a", '%': `\%`, '_': `\_`}

// unescape is the value of the body of a MySQL string literal quoted with
// q: backslash escapes and doubled quotes resolved (\% and \_ keep their
// backslash, as in MySQL).
func unescape(body string, q byte) string {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\\' && i+1 < len(body):
			i++
			if e, ok := escapes[body[i]]; ok {
				b.WriteString(e)
			} else {
				b.WriteByte(body[i])
			}
		case c == q && i+1 < len(body) && body[i+1] == q:
			b.WriteByte(q)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
