package sqlport

import (
	"regexp"
	"strings"
)

// havingAsWhere rewrites a SELECT whose HAVING has no GROUP BY and whose
// select list no aggregate (MySQL's HAVING as a filter on the select
// list, as Connector/J's getTables sends it) into the same SELECT with the
// HAVING's condition AND-ed to its WHERE, each select-list alias the
// condition names replaced by the aliased expression: MySQL resolves a
// name in HAVING to the select list's alias first, and DuckDB takes a
// HAVING only over groups. Any other text is returned as it is: a
// statement with a set operation, a GROUP BY, WINDOW or QUALIFY, an
// aggregate, or an alias the condition names whose expression holds a
// parameter (whose order would change).
func havingAsWhere(text string) string {
	c := clausesOf(text)
	if c == nil || c.at["having"] < 0 || c.at["group"] >= 0 || c.at["window"] >= 0 || c.at["qualify"] >= 0 ||
		c.at["union"] >= 0 || c.at["intersect"] >= 0 || c.at["except"] >= 0 || c.at["select"] < 0 || c.at["from"] < 0 {
		return text
	}
	list := selectModifier.ReplaceAllString(text[c.at["select"]+len("select"):c.at["from"]], "")
	if aggregateCall.MatchString(list) {
		return text
	}
	aliases := map[string]string{}
	for _, item := range splitArgs(list) {
		if m := aliasOf.FindStringSubmatch(item); m != nil {
			name := m[2]
			if name == "" {
				name = strings.ReplaceAll(m[1], `""`, `"`)
			}
			aliases[strings.ToLower(name)] = strings.TrimSpace(item[:len(item)-len(m[0])])
		}
	}
	hStart := c.at["having"] + len("having")
	hEnd := c.next(c.at["having"], len(text))
	cond, ok := inlineAliases(text[hStart:hEnd], aliases)
	if !ok {
		return text
	}
	if w := c.at["where"]; w >= 0 {
		return text[:w] + "WHERE (" + text[w+len("where"):c.at["having"]] + ") AND (" + cond + ") " + text[hEnd:]
	}
	return text[:c.at["having"]] + "WHERE " + cond + " " + text[hEnd:]
}

// aggregateCall matches a call of an aggregate function.
var aggregateCall = regexp.MustCompile(`(?i)\b(count|sum|min|max|avg|string_agg|group_concat|listagg|any_value|arbitrary|first|last|list|array_agg|bit_and|bit_or|bit_xor|bool_and|bool_or|std|stddev|stddev_pop|stddev_samp|variance|var_pop|var_samp|median|mode|quantile|json_group_array|json_group_object|histogram)\s*\(`)

// selectModifier matches DISTINCT or ALL at the start of a select list.
var selectModifier = regexp.MustCompile(`(?is)^\s*(?:DISTINCT|ALL)\b`)

// aliasOf matches a select item's alias at its end: AS name or AS "name".
var aliasOf = regexp.MustCompile(`(?is)\s+AS\s+(?:"((?:[^"]|"")*)"|([A-Za-z_][A-Za-z0-9_$]*))\s*$`)

// identToken matches an identifier at the start of a string: bare or
// double-quoted.
var identToken = regexp.MustCompile(`^(?:"((?:[^"]|"")*)"|([A-Za-z_][A-Za-z0-9_$]*))`)

// inlineAliases replaces each identifier of cond that names an alias (not
// qualified, not a call) by its expression in parentheses; false when such
// an expression holds a parameter.
func inlineAliases(cond string, aliases map[string]string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(cond); {
		switch ch := cond[i]; {
		case ch == '\'':
			end := quotedEnd(cond, i, '\'')
			b.WriteString(cond[i:end])
			i = end
			continue
		case ch == '"' || ch == '_' || ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z':
			if i > 0 && (isWordByte(cond[i-1]) || cond[i-1] == '.') {
				break
			}
			m := identToken.FindStringSubmatch(cond[i:])
			if m == nil {
				break
			}
			name := m[2]
			if name == "" {
				name = strings.ReplaceAll(m[1], `""`, `"`)
			}
			rest := strings.TrimLeft(cond[i+len(m[0]):], " \t\n")
			expr, ok := aliases[strings.ToLower(name)]
			if ok && !strings.HasPrefix(rest, "(") && !strings.HasPrefix(rest, ".") {
				if len(paramLocs(expr)) > 0 {
					return "", false
				}
				b.WriteString("(" + expr + ")")
			} else {
				b.WriteString(m[0])
			}
			i += len(m[0])
			continue
		}
		b.WriteByte(cond[i])
		i++
	}
	return b.String(), true
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// quotedEnd is the index after the string or identifier quoted with q
// that starts at i (a doubled quote inside it), or len(s) when open.
func quotedEnd(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// clauses are where a statement's top-level (outside parentheses, strings
// and comments) keywords start: the first of each, -1 when absent.
type clauses struct {
	at    map[string]int
	order []int // every keyword found, in text order
}

// clauseWords are the keywords clausesOf looks for ("group" and "order"
// followed by BY).
var clauseWords = []string{"select", "from", "where", "group", "having", "window", "qualify", "order", "limit", "offset",
	"union", "intersect", "except", "with"}

// clausesOf finds the top-level keywords of text (on its mask: no word
// of a string, quoted identifier or comment counts); nil when the text
// holds a WITH (not looked into).
func clausesOf(text string) *clauses {
	c := &clauses{at: map[string]int{}}
	for _, w := range clauseWords {
		c.at[w] = -1
	}
	m := mask(text)
	depth := 0
	for i := 0; i < len(m); i++ {
		switch ch := m[i]; {
		case ch == '(':
			depth++
		case ch == ')':
			depth--
		case depth == 0 && isWordByte(ch) && (i == 0 || !isWordByte(m[i-1])):
			j := i
			for j < len(m) && isWordByte(m[j]) {
				j++
			}
			w := strings.ToLower(m[i:j])
			if _, ok := c.at[w]; ok && (w != "group" && w != "order" || byFollows(m[j:])) {
				if w == "with" {
					return nil
				}
				if c.at[w] < 0 {
					c.at[w] = i
				}
				c.order = append(c.order, i)
			}
			i = j - 1
		}
	}
	return c
}

// byFollows reports whether BY is the next word of s.
func byFollows(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return len(s) >= 2 && strings.EqualFold(s[:2], "by") && (len(s) == 2 || !isWordByte(s[2]))
}

// next is where the top-level keyword after position at starts, or end.
func (c *clauses) next(at, end int) int {
	for _, p := range c.order {
		if p > at {
			return p
		}
	}
	return end
}
