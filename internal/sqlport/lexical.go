package sqlport

// The lexical helpers of the translation: masked text, parentheses,
// literals and arguments, shared by the function and statement rewrites.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// topLevel is re's first match in masked text m outside parentheses.
func topLevel(re *regexp.Regexp, m string) []int {
	for _, loc := range re.FindAllStringIndex(m, -1) {
		if depth(m[:loc[0]]) == 0 {
			return loc
		}
	}
	return nil
}

func depth(m string) int {
	return strings.Count(m, "(") - strings.Count(m, ")")
}

// dateSpecs are MySQL's DATE_FORMAT specifiers as strftime's.
var dateSpecs = map[byte]string{
	'a': "%a", 'b': "%b", 'c': "%-m", 'd': "%d", 'e': "%-d", 'f': "%f", 'H': "%H", 'h': "%I", 'I': "%I",
	'i': "%M", 'j': "%j", 'k': "%-H", 'l': "%-I", 'M': "%B", 'm': "%m", 'p': "%p", 'r': "%I:%M:%S %p",
	'S': "%S", 's': "%S", 'T': "%H:%M:%S", 'U': "%U", 'u': "%W", 'v': "%V", 'W': "%A", 'w': "%w",
	'x': "%G", 'Y': "%Y", 'y': "%y",
}

// dateSpecsRefused are MySQL specifiers strftime cannot write.
var dateSpecsRefused = map[byte]string{
	'D': "the day with an English suffix (1st, 2nd) has no strftime specifier",
	'V': "the week of a year whose weeks start on Sunday, numbered as %X's, has no strftime specifier",
	'X': "the year of %V's weeks has no strftime specifier",
}

// isStringLiteral reports whether s is one DuckDB string literal.
func isStringLiteral(s string) bool {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return false
	}
	body := s[1 : len(s)-1]
	return !strings.Contains(strings.ReplaceAll(body, "''", ""), "'")
}

// sqlString is s as a DuckDB string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlValue is v (a variable's value) as a DuckDB literal.
func sqlValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64, int, uint64:
		return fmt.Sprint(x)
	}
	return sqlString(fmt.Sprint(v))
}

func isWordStart(c byte) bool {
	return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z'
}

func isWord(c byte) bool {
	return isWordStart(c) || c >= '0' && c <= '9' || c == '$' || c >= 0x80
}

// afterDot reports whether the word at m[i] follows a '.' (a qualified
// name: t.now is a column, not a call).
func afterDot(m string, i int) bool {
	for i--; i >= 0; i-- {
		switch m[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '.':
			return true
		}
		return false
	}
	return false
}

// closeParen is the index of the parenthesis closing the one at m[open].
func closeParen(m string, open int) (int, error) {
	d := 0
	for k := open; k < len(m); k++ {
		switch m[k] {
		case '(':
			d++
		case ')':
			d--
			if d == 0 {
				return k, nil
			}
		}
	}
	return 0, mysql.NewError(mysql.ER_PARSE_ERROR, fmt.Sprintf("the parenthesis opened at byte %d is not closed", open))
}

// splitArgs splits text at its commas outside parentheses and literals.
func splitArgs(text string) []string {
	m := mask(text)
	var out []string
	d, start := 0, 0
	for k := 0; k < len(m); k++ {
		switch m[k] {
		case '(':
			d++
		case ')':
			d--
		case ',':
			if d == 0 {
				out = append(out, text[start:k])
				start = k + 1
			}
		}
	}
	if strings.TrimSpace(text[start:]) != "" || len(out) > 0 {
		out = append(out, text[start:])
	}
	return out
}

// mask is DuckDB text with the insides of string literals, quoted
// identifiers and comments blanked (their quotes kept), so words,
// parentheses and commas are found by position in the text itself.
func mask(text string) string {
	b := []byte(text)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\'' || b[i] == '"':
			q := b[i]
			j := i + 1
			for j < len(b) {
				if b[j] == q {
					if j+1 < len(b) && b[j+1] == q {
						b[j], b[j+1] = ' ', ' '
						j += 2
						continue
					}
					break
				}
				b[j] = ' '
				j++
			}
			i = j
		case b[i] == '-' && i+1 < len(b) && b[i+1] == '-':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			for i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/') {
				b[i] = ' '
				i++
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b)
}
