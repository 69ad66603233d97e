package restore

import (
	"fmt"
	"strings"
	"unicode"
)

// RenameCreate returns the CREATE TABLE statement create (as a table
// file's footer holds it: optionally after a /* comment */, unqualified
// name) creating schemaName.table instead. A statement of another form is
// an error: guessing could create a table elsewhere.
func RenameCreate(create, schemaName, table string) (string, error) {
	s := strings.TrimSpace(create)
	i := 0
	for strings.HasPrefix(s[i:], "/*") {
		end := strings.Index(s[i:], "*/")
		if end < 0 {
			return "", fmt.Errorf("CREATE TABLE statement: unterminated comment")
		}
		i += end + 2
		for i < len(s) && unicode.IsSpace(rune(s[i])) {
			i++
		}
	}
	head := s[i:]
	const kw = "CREATE TABLE "
	if len(head) < len(kw) || !strings.EqualFold(head[:len(kw)], kw) {
		return "", fmt.Errorf("statement %q is not a CREATE TABLE", abbreviate(head))
	}
	rest := strings.TrimLeft(head[len(kw):], " ")
	const ine = "IF NOT EXISTS "
	if len(rest) >= len(ine) && strings.EqualFold(rest[:len(ine)], ine) {
		rest = strings.TrimLeft(rest[len(ine):], " ")
	}
	n, err := identLen(rest)
	if err != nil {
		return "", fmt.Errorf("CREATE TABLE statement %q: %w", abbreviate(head), err)
	}
	after := rest[n:]
	if strings.HasPrefix(after, ".") { // qualified: drop the schema, keep the name
		m, err := identLen(after[1:])
		if err != nil {
			return "", fmt.Errorf("CREATE TABLE statement %q: %w", abbreviate(head), err)
		}
		after = after[1+m:]
	}
	return s[:i] + "CREATE TABLE " + Qualified(schemaName, table) + after, nil
}

// identLen is the length of the identifier at the start of s: backquoted
// (“ doubles a backquote) or bare.
func identLen(s string) (int, error) {
	if strings.HasPrefix(s, "`") {
		for j := 1; j < len(s); j++ {
			if s[j] != '`' {
				continue
			}
			if j+1 < len(s) && s[j+1] == '`' {
				j++
				continue
			}
			return j + 1, nil
		}
		return 0, fmt.Errorf("unterminated quoted name")
	}
	j := 0
	for j < len(s) && (s[j] == '_' || s[j] == '$' || s[j] >= 0x80 || s[j] >= '0' && s[j] <= '9' ||
		s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') {
		j++
	}
	if j == 0 {
		return 0, fmt.Errorf("no table name")
	}
	return j, nil
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// UnnameForeignKeys removes the names of create's foreign keys
// ("CONSTRAINT `x` FOREIGN KEY" becomes "FOREIGN KEY"): InnoDB's
// foreign key names are unique per schema, so a --replace twin created
// beside the table it replaces takes server-generated names
// (<table>_ibfk_<n>, renamed with the table by RENAME TABLE).
func UnnameForeignKeys(create string) string {
	var b strings.Builder
	s := create
	for {
		i := indexFold(s, "CONSTRAINT ")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		rest := strings.TrimLeft(s[i+len("CONSTRAINT "):], " ")
		n, err := identLen(rest)
		if err == nil {
			after := strings.TrimLeft(rest[n:], " ")
			if len(after) >= len("FOREIGN KEY") && strings.EqualFold(after[:len("FOREIGN KEY")], "FOREIGN KEY") {
				b.WriteString(s[:i])
				s = after
				continue
			}
		}
		b.WriteString(s[:i+len("CONSTRAINT ")])
		s = s[i+len("CONSTRAINT "):]
	}
}

// indexFold is strings.Index ignoring ASCII case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
