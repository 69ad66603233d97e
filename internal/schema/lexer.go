package schema

import "strings"

// tokKind is the class of a lexical token of a SQL statement.
type tokKind int

const (
	tkSpace   tokKind = iota // white space, or the markers of a /*! */ comment
	tkComment                // -- # and /* */ comments
	tkWord                   // unquoted identifier, keyword or number
	tkIdent                  // `quoted identifier`
	tkString                 // 'string' or "string"
	tkPunct                  // any other single character
)

// token is one lexical token. Joining the texts of all tokens gives the
// statement back, so a rewrite edits text in place and joins again.
type token struct {
	kind tokKind
	text string
}

// tokenize splits a MariaDB/MySQL statement into tokens. It never fails: an
// unterminated quote or comment runs to the end. Executable comments
// (/*! ... */, /*!50100 ... */, /*M!100100 ... */) are unwrapped: their
// markers become white space and their content is tokenized as code, which
// is what the server does with them.
func tokenize(s string) []token {
	var out []token
	inExec := false // inside an executable comment
	i := 0
	emit := func(k tokKind, end int) {
		out = append(out, token{k, s[i:end]})
		i = end
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\n\r\f\v", s[j]) >= 0 {
				j++
			}
			emit(tkSpace, j)
		case inExec && strings.HasPrefix(s[i:], "*/"):
			inExec = false
			i += 2
			out = append(out, token{tkSpace, " "})
		case strings.HasPrefix(s[i:], "/*!") || strings.HasPrefix(s[i:], "/*M!"):
			j := i + 3
			if s[i+2] == 'M' {
				j++
			}
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			inExec = true
			i = j
			out = append(out, token{tkSpace, " "})
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				emit(tkComment, len(s))
			} else {
				emit(tkComment, i+2+end+2)
			}
		case c == '#' || (strings.HasPrefix(s[i:], "--") && (i+2 == len(s) || strings.IndexByte(" \t\n\r", s[i+2]) >= 0)):
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				emit(tkComment, len(s))
			} else {
				emit(tkComment, i+end)
			}
		case c == '`':
			emit(tkIdent, quoteEnd(s, i, '`', false))
		case c == '\'' || c == '"':
			emit(tkString, quoteEnd(s, i, c, true))
		case isWordByte(c):
			j := i + 1
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			emit(tkWord, j)
		default:
			emit(tkPunct, i+1)
		}
	}
	return out
}

// quoteEnd returns the index just past the quoted token starting at s[i]:
// a doubled quote stands for itself and, in strings, a backslash escapes the
// next byte.
func quoteEnd(s string, i int, q byte, backslash bool) int {
	j := i + 1
	for j < len(s) {
		switch {
		case backslash && s[j] == '\\':
			j += 2
		case s[j] == q && j+1 < len(s) && s[j+1] == q:
			j += 2
		case s[j] == q:
			return j + 1
		default:
			j++
		}
	}
	return len(s)
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		(c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// unquoteIdent returns the name a word or `quoted` identifier token stands
// for.
func unquoteIdent(t token) string {
	switch t.kind {
	case tkIdent:
		return strings.ReplaceAll(t.text[1:max(1, len(t.text)-1)], "``", "`")
	case tkString:
		return unquoteString(t.text)
	}
	return t.text
}

// unquoteString decodes a '...' or "..." literal with MariaDB's escapes.
func unquoteString(lit string) string {
	if len(lit) < 2 {
		return lit
	}
	q := lit[0]
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			b.WriteString(unescapeByte(body[i]))
		case c == q && i+1 < len(body) && body[i+1] == q:
			i++
			b.WriteByte(q)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeByte maps the byte after a backslash to what it stands for.
func unescapeByte(c byte) string {
	switch c {
	case '0':
		return "\x00"
	case 'n':
		return "\n"
	case 'r':
		return "\r"
	case 't':
		return "\t"
	case 'b':
		return "\b"
	case 'Z':
		return "\x1a"
	case '%', '_':
		return "\\" + string(c) // kept with the backslash, as MariaDB does
	}
	return string(c)
}
