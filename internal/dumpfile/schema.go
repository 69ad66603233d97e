package dumpfile

import (
	"fmt"
	"io"
	"strings"
)

// maxSchemaFile bounds what ReadCreateTable reads: a schema file holds one
// CREATE statement, never data.
const maxSchemaFile = 16 << 20

// ReadCreateTable returns the CREATE TABLE statement of a mydumper schema
// file ("<db>.<t>-schema.sql"): its text from CREATE up to, not including,
// the closing ';', exactly as written (comments inside it are kept).
// Comments, "/*!40101 SET NAMES binary*/;"-style versioned statements, SET
// and DROP statements around it are skipped. A file without a CREATE TABLE,
// with a CREATE VIEW, with more than one CREATE, or with any other
// statement is an error giving the line. Callers add the file name.
func ReadCreateTable(r io.Reader) (string, error) {
	stmt, err := readCreate(r, "schema file")
	if err != nil {
		return "", err
	}
	if kind := createKind(stmt); kind != "TABLE" {
		return "", fmt.Errorf("schema file: CREATE %s, not CREATE TABLE", kind)
	}
	return stmt, nil
}

// readCreate returns the one CREATE statement of a schema file; name is
// used in errors.
func readCreate(r io.Reader, name string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSchemaFile+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxSchemaFile {
		return "", fmt.Errorf("%s: larger than %d MiB, not a schema file", name, maxSchemaFile>>20)
	}
	stmts, err := splitStatements(string(b), name)
	if err != nil {
		return "", err
	}
	create := ""
	for _, st := range stmts {
		word := firstWord(st.text)
		switch {
		case word == "":
		case word == "SET", word == "DROP":
		case word == "CREATE" && create == "":
			create = strings.TrimRight(st.text[leadLen(st.text):], " \t\r\n")
		case word == "CREATE":
			return "", fmt.Errorf("%s:%d: a second CREATE statement", name, st.line)
		default:
			return "", fmt.Errorf("%s:%d: unexpected %s statement in a schema file", name, st.line, word)
		}
	}
	if create == "" {
		return "", fmt.Errorf("%s: no CREATE TABLE statement", name)
	}
	return create, nil
}

type sqlStatement struct {
	text string // without the ';'
	line int    // 1-based line of its first byte
}

// splitStatements splits SQL text at ';' outside quotes and comments. The
// content of versioned comments (/*!NNNNN ... */) counts as SQL. Text after
// the last ';' that is only space and comments is dropped; anything else
// there is an unterminated statement.
func splitStatements(s, name string) ([]sqlStatement, error) {
	var out []sqlStatement
	line, start, startLine := 1, 0, 1 // startLine: line of s[start]
	versioned := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			line++
		case c == '\'' || c == '"' || c == '`':
			open := line
			for i++; ; i++ {
				if i >= len(s) {
					return nil, fmt.Errorf("%s:%d: unterminated quoted text", name, open)
				}
				if s[i] == '\n' {
					line++
				} else if s[i] == '\\' && c != '`' {
					i++
					if i < len(s) && s[i] == '\n' {
						line++
					}
				} else if s[i] == c {
					if i+1 < len(s) && s[i+1] == c {
						i++
						continue
					}
					break
				}
			}
		case c == '#' || c == '-' && strings.HasPrefix(s[i:], "--") && (i+2 == len(s) || s[i+2] <= ' '):
			for i < len(s) && s[i] != '\n' {
				i++
			}
			line++
		case c == '/' && strings.HasPrefix(s[i:], "/*!"), c == '/' && strings.HasPrefix(s[i:], "/*M!"):
			versioned = true
			i += 2
		case c == '*' && versioned && strings.HasPrefix(s[i:], "*/"):
			versioned = false
			i++
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: unterminated /* comment", name, line)
			}
			line += strings.Count(s[i:i+2+end], "\n")
			i += end + 3
		case c == ';':
			text := s[start:i]
			out = append(out, sqlStatement{text, startLine + strings.Count(text[:leadLen(text)], "\n")})
			start, startLine = i+1, line
		}
	}
	if rest := s[start:]; firstWord(rest) != "" {
		return nil, fmt.Errorf("%s:%d: statement without a closing ';'", name, startLine+strings.Count(rest[:leadLen(rest)], "\n"))
	}
	return out, nil
}

// leadLen returns the length of the space and plain comments that start s.
func leadLen(s string) int {
	i := 0
	for i < len(s) {
		switch rest := s[i:]; {
		case strings.IndexByte(" \t\r\n\f\v", s[i]) >= 0:
			i++
		case strings.HasPrefix(rest, "/*") && !strings.HasPrefix(rest, "/*!") && !strings.HasPrefix(rest, "/*M!"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				return len(s)
			}
			i += end + 4
		case rest[0] == '#' || strings.HasPrefix(rest, "--"):
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				return len(s)
			}
			i += end + 1
		default:
			return i
		}
	}
	return i
}

// firstWord returns the first keyword of a statement in upper case, after
// space, comments and versioned-comment markers; "" when there is none.
func firstWord(s string) string {
	s = s[leadLen(s):]
	if strings.HasPrefix(s, "/*!") || strings.HasPrefix(s, "/*M!") {
		s = strings.TrimLeft(s[strings.IndexByte(s, '!')+1:], "0123456789")
		s = s[leadLen(s):]
	}
	end := 0
	for end < len(s) && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z' || s[end] == '_') {
		end++
	}
	if end == 0 && s != "" && !strings.HasPrefix(s, "*/") {
		return strings.ToUpper(s[:1])
	}
	return strings.ToUpper(s[:end])
}

// createKind returns what a CREATE statement creates: "TABLE", "VIEW",
// "SEQUENCE", or "?" when it cannot tell. It looks at the words before the
// object's name, skipping OR REPLACE, ALGORITHM=, DEFINER=, SQL SECURITY,
// TEMPORARY and the like.
func createKind(stmt string) string {
	words := strings.Fields(stmt)
	for i, w := range words {
		if i > 12 {
			break
		}
		switch u := strings.ToUpper(w); u {
		case "TABLE", "VIEW", "SEQUENCE":
			return u
		}
	}
	return "?"
}
