package shell

import "strings"

// SplitStatements splits text at the semicolons that end statements: those
// outside string literals ('…', E'…' with backslash escapes, $tag$…$tag$),
// quoted identifiers ("…") and comments (-- to the end of the line, /* */
// nested as DuckDB nests them). It returns the complete statements, trimmed
// and without their ';', leaving out those holding only comments and
// spaces, and the text after the last ';' (an unfinished statement, or
// spaces and comments). pending reports whether rest holds more than spaces
// and complete comments: a statement without its ';', or an open literal or
// comment.
func SplitStatements(text string) (stmts []string, rest string, pending bool) {
	start, i := 0, 0
	content := false // the current statement has more than spaces and comments
	for i < len(text) {
		c := text[i]
		switch {
		case c == ';':
			if content {
				stmts = append(stmts, strings.TrimSpace(text[start:i]))
			}
			i++
			start, content = i, false
			continue
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			i = skipLineComment(text, i)
			continue
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			var closed bool
			if i, closed = skipBlockComment(text, i); !closed {
				return stmts, text[start:], true
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
			continue
		}
		content = true
		switch {
		case c == '\'':
			i = skipQuoted(text, i, '\'', escapeString(text, i))
		case c == '"':
			i = skipQuoted(text, i, '"', false)
		case c == '$':
			i = skipDollar(text, i)
		default:
			i++
		}
	}
	return stmts, text[start:], content
}

// skipLineComment returns the index after the "--" comment at i (its
// newline included).
func skipLineComment(text string, i int) int {
	if n := strings.IndexByte(text[i:], '\n'); n >= 0 {
		return i + n + 1
	}
	return len(text)
}

// skipBlockComment returns the index after the /* */ comment at i, nested
// comments included, and true; or len(text) and false when it does not end.
func skipBlockComment(text string, i int) (int, bool) {
	depth := 0
	for i < len(text) {
		switch {
		case strings.HasPrefix(text[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(text[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i, true
			}
		default:
			i++
		}
	}
	return len(text), false
}

// escapeString reports whether the quote at i opens an E'…' literal.
func escapeString(text string, i int) bool {
	if i == 0 || (text[i-1] != 'E' && text[i-1] != 'e') {
		return false
	}
	return i == 1 || !isIdentByte(text[i-2])
}

// skipQuoted returns the index after the literal or identifier opened by
// quote q at i (a doubled quote stands for itself; with backslash, a
// backslash escapes the next byte), or len(text) when it does not end.
func skipQuoted(text string, i int, q byte, backslash bool) int {
	for i++; i < len(text); i++ {
		switch {
		case backslash && text[i] == '\\':
			i++
		case text[i] == q && i+1 < len(text) && text[i+1] == q:
			i++
		case text[i] == q:
			return i + 1
		}
	}
	return len(text)
}

// skipDollar returns the index after the $tag$…$tag$ literal at i, or i+1
// when the '$' opens none (a parameter such as $1).
func skipDollar(text string, i int) int {
	j := i + 1
	for j < len(text) && isIdentByte(text[j]) && !(j == i+1 && text[j] >= '0' && text[j] <= '9') {
		j++
	}
	if j >= len(text) || text[j] != '$' {
		return i + 1
	}
	tag := text[i : j+1]
	if n := strings.Index(text[j+1:], tag); n >= 0 {
		return j + 1 + n + len(tag)
	}
	return len(text)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
