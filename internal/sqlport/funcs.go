package sqlport

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// funcEnv is what the function translation needs of the session.
type funcEnv struct {
	// now is the commit time of the transaction the session answers at:
	// NOW(), CURDATE(), UNIX_TIMESTAMP() and their kin are that moment's.
	now time.Time
	// loc is the session's time_zone (nil: UTC): NOW() and its kin are
	// the moment's commit time in it.
	loc  *time.Location
	db   string // DATABASE(); "" is NULL
	user string
	// variable is @@name's value (the port's system variables).
	variable func(name string) (any, error)
	// concatMax is the session's group_concat_max_len (0: the default).
	concatMax int64
}

// notTranslated is the error of a MySQL construct the port does not
// translate: a MySQL error naming it, never a different answer.
func notTranslated(construct, why string) error {
	return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, fmt.Sprintf("the dbtrail SQL port does not translate %s: %s", construct, why))
}

// refusedConstructs are MySQL constructs DuckDB would refuse, or answer
// differently, found in a statement's text outside literals.
var refusedConstructs = []struct {
	re   *regexp.Regexp
	name string
	why  string
}{
	{regexp.MustCompile(`(?i)\bSQL_CALC_FOUND_ROWS\b|\bFOUND_ROWS\s*\(`), "SQL_CALC_FOUND_ROWS / FOUND_ROWS()", "run the count as its own SELECT count(*)"},
	{regexp.MustCompile(`(?i)\bSTRAIGHT_JOIN\b`), "STRAIGHT_JOIN", "write JOIN"},
	{regexp.MustCompile(`(?i)\b(FORCE|USE|IGNORE)\s+(INDEX|KEY)\b`), "index hints (FORCE/USE/IGNORE INDEX)", "the backup has no indexes: leave the hint out"},
	{regexp.MustCompile(`(?i)\bWITH\s+ROLLUP\b`), "WITH ROLLUP", "write GROUP BY ROLLUP (…)"},
	{regexp.MustCompile(`(?i)\bFOR\s+(UPDATE|SHARE)\b|\bLOCK\s+IN\s+SHARE\s+MODE\b`), "locking reads (FOR UPDATE, LOCK IN SHARE MODE)", "the port is read-only and takes no lock"},
	{regexp.MustCompile(`(?i)\bSOUNDS\s+LIKE\b|\bSOUNDEX\s*\(`), "SOUNDS LIKE / SOUNDEX()", "no DuckDB equivalent"},
	{regexp.MustCompile(`(?i)\bREGEXP\b|\bRLIKE\b`), "the REGEXP/RLIKE operator", "write regexp_matches(text, pattern)"},
	{regexp.MustCompile(`(?i)\bXOR\b`), "the XOR operator", "write (a OR b) AND NOT (a AND b)"},
	{regexp.MustCompile(`\|\|`), "the || operator", "MySQL's || is OR (sql_mode without PIPES_AS_CONCAT): write OR, or CONCAT() to join strings"},
	{regexp.MustCompile(`(?i)\bMATCH\s*\([^)]*\)\s*AGAINST\b`), "MATCH … AGAINST", "no full-text index in the backup"},
	{regexp.MustCompile(`(?:^|[^@\w])@[A-Za-z_$]`), "user variables (@name)", "the port keeps no user variables: write the value"},
	{regexp.MustCompile(`:=`), "the := assignment", "the port keeps no user variables"},
	{regexp.MustCompile(`(?i)(?:^|[^.\w])(today|get_current_time|get_current_timestamp|transaction_timestamp|current_localtime|current_localtimestamp)\b`), "a clock function (", "the time of a moment is NOW() / CURRENT_TIMESTAMP, its commit time"},
}

// timeWords are MySQL's words for the statement's time, answered with the
// moment's commit time in the session's time_zone (UTC for the utc_
// ones): a timestamp, a date or a time (an INTERVAL, as the typed views
// present TIME); they may be written without parentheses.
var timeWords = map[string]string{
	"now": "timestamp", "sysdate": "timestamp", "current_timestamp": "timestamp", "localtime": "timestamp",
	"localtimestamp": "timestamp", "utc_timestamp": "timestamp",
	"curdate": "date", "current_date": "date", "utc_date": "date",
	"curtime": "time", "current_time": "time", "utc_time": "time",
}

// bareWords may be written without parentheses (the others need them).
var bareWords = map[string]bool{"current_timestamp": true, "localtime": true, "localtimestamp": true,
	"current_date": true, "current_time": true, "utc_timestamp": true, "utc_date": true, "utc_time": true,
	"current_user": true}

// rewriteFuncs translates the MySQL functions and operators of a
// statement already in DuckDB's lexical form (translate): IFNULL, NOW()
// and its kin, CONCAT, GROUP_CONCAT, DATE_FORMAT, FROM_UNIXTIME,
// UNIX_TIMESTAMP, LENGTH, DATABASE(), USER(), VERSION(), @@variables,
// DIV and <=>. A construct it cannot translate is an error naming it.
func rewriteFuncs(text string, env *funcEnv) (string, error) {
	return rewriteText(text, env, nil)
}

// namedValue is a value rewriteFuncs wrote in place of a call or a
// variable (NOW(), DATABASE(), @@version) at byte pos of its answer, len
// bytes long: MySQL names such a select-list column by the text as written,
// name.
type namedValue struct {
	pos, len int
	name     string
}

// valueWords are the calls rewriteFuncs answers with a literal value.
var valueWords = map[string]bool{"database": true, "schema": true, "user": true, "current_user": true,
	"session_user": true, "system_user": true, "version": true}

// rewriteText is rewriteFuncs; with named, it also records the values it
// wrote for calls and variables of text's own level (not inside a call's
// arguments).
func rewriteText(text string, env *funcEnv, named *[]namedValue) (string, error) {
	m := mask(text)
	for _, r := range refusedConstructs {
		if loc := r.re.FindStringSubmatchIndex(m); loc != nil {
			name := r.name
			if strings.HasSuffix(name, "(") { // the clock function's own name
				name += text[loc[2]:loc[3]] + ")"
			}
			return "", notTranslated(name, r.why)
		}
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		c := m[i]
		switch {
		case strings.HasPrefix(m[i:], "@@"):
			j := i + 2
			for j < len(m) && (isWord(m[j]) || m[j] == '.') {
				j++
			}
			name := strings.ToLower(m[i+2 : j])
			name = strings.TrimPrefix(strings.TrimPrefix(name, "session."), "global.")
			v, err := env.variable(name)
			if err != nil {
				return "", err
			}
			if named != nil {
				*named = append(*named, namedValue{b.Len(), len(sqlValue(v)), text[i:j]})
			}
			b.WriteString(sqlValue(v))
			i = j
		case strings.HasPrefix(m[i:], "<=>"):
			b.WriteString(" IS NOT DISTINCT FROM ")
			i += 3
		case isWordStart(c) && (i == 0 || !isWord(m[i-1])):
			j := i
			for j < len(m) && isWord(m[j]) {
				j++
			}
			out, next, err := rewriteWord(text, m, i, j, env)
			if err != nil {
				return "", err
			}
			if w := strings.ToLower(m[i:j]); named != nil && out != text[i:j] && (valueWords[w] || timeWords[w] != "") {
				*named = append(*named, namedValue{b.Len(), len(out), strings.TrimSpace(text[i:next])})
			}
			b.WriteString(out)
			i = next
		default:
			b.WriteByte(text[i])
			i++
		}
	}
	return b.String(), nil
}

// rewriteWord translates the word text[i:j] (and its arguments, when it
// calls a function the port translates); it returns the text to write and
// where to go on.
func rewriteWord(text, m string, i, j int, env *funcEnv) (string, int, error) {
	word := strings.ToLower(m[i:j])
	open := j
	for open < len(m) && (m[open] == ' ' || m[open] == '\t' || m[open] == '\n' || m[open] == '\r') {
		open++
	}
	called := open < len(m) && m[open] == '('
	if duckOnlyKeywords[word] && !called {
		return `"` + text[i:j] + `"`, j, nil
	}
	if afterDot(m, i) {
		return text[i:j], j, nil
	}
	if word == "div" {
		return "//", j, nil
	}
	if !called {
		if bareWords[word] {
			out, err := callOf(word, nil, env)
			return out, j, err
		}
		return text[i:j], j, nil
	}
	if _, ok := translated[word]; !ok && word != "group_concat" {
		if _, ok := timeWords[word]; !ok {
			return text[i:j], j, nil
		}
	}
	end, err := closeParen(m, open)
	if err != nil {
		return "", 0, err
	}
	if word == "group_concat" {
		out, err := groupConcat(text[open+1:end], env)
		return out, end + 1, err
	}
	var args []string
	for _, a := range splitArgs(text[open+1 : end]) {
		ra, err := rewriteFuncs(a, env)
		if err != nil {
			return "", 0, err
		}
		args = append(args, strings.TrimSpace(ra))
	}
	out, err := callOf(word, args, env)
	return out, end + 1, err
}

// duckOnlyKeywords are words DuckDB's grammar reserves that MySQL's
// SELECT never uses as keywords: written bare in a MySQL statement they
// are names (a column called at), so they are quoted for DuckDB.
var duckOnlyKeywords = map[string]bool{
	"at": true, "asof": true, "anti": true, "semi": true, "positional": true, "glob": true, "map": true,
	"struct": true, "unpack": true, "verbose": true, "freeze": true, "concurrently": true, "qualify": true,
	"summarize": true, "pivot": true, "unpivot": true, "pivot_longer": true, "pivot_wider": true,
	"lambda": true, "variadic": true, "placing": true, "symmetric": true, "asymmetric": true,
	"deferrable": true, "initially": true, "returning": true, "setof": true, "treat": true, "none": true,
	"collation": true,
}

// translated are the functions rewriteFuncs translates, each from its
// rewritten arguments (timeWords too).
var translated = map[string]func(args []string, env *funcEnv) (string, error){
	"ifnull": func(a []string, _ *funcEnv) (string, error) {
		if len(a) != 2 {
			return "", arity("IFNULL", 2, len(a))
		}
		return coalesce(a), nil
	},
	"coalesce": func(a []string, _ *funcEnv) (string, error) {
		if len(a) == 0 {
			return "", arity("COALESCE", 1, 0)
		}
		return coalesce(a), nil
	},
	"concat": func(a []string, _ *funcEnv) (string, error) {
		if len(a) == 0 {
			return "", arity("CONCAT", 1, 0)
		}
		return "(" + joinText(a) + ")", nil
	},
	"date_format": func(a []string, _ *funcEnv) (string, error) {
		if len(a) != 2 {
			return "", arity("DATE_FORMAT", 2, len(a))
		}
		f, err := strftimeFormat(a[1])
		if err != nil {
			return "", err
		}
		return "strftime(CAST(" + a[0] + " AS TIMESTAMP), " + f + ")", nil
	},
	"from_unixtime": func(a []string, env *funcEnv) (string, error) {
		if len(a) < 1 || len(a) > 2 {
			return "", arity("FROM_UNIXTIME", 1, len(a))
		}
		off, err := env.offset("FROM_UNIXTIME")
		if err != nil {
			return "", err
		}
		ts := "make_timestamp(CAST(round((" + a[0] + ") * 1000000) AS BIGINT)" + plusSeconds(off, 1000000) + ")"
		if len(a) == 1 {
			return ts, nil
		}
		f, err := strftimeFormat(a[1])
		if err != nil {
			return "", err
		}
		return "strftime(" + ts + ", " + f + ")", nil
	},
	"unix_timestamp": func(a []string, env *funcEnv) (string, error) {
		switch len(a) {
		case 0:
			return strconv.FormatInt(env.now.Unix(), 10), nil
		case 1:
			off, err := env.offset("UNIX_TIMESTAMP")
			if err != nil {
				return "", err
			}
			return "CAST(epoch(CAST(" + a[0] + " AS TIMESTAMP))" + plusSeconds(-off, 1) + " AS BIGINT)", nil
		}
		return "", arity("UNIX_TIMESTAMP", 1, len(a))
	},
	"timediff": func(a []string, _ *funcEnv) (string, error) {
		if len(a) != 2 {
			return "", arity("TIMEDIFF", 2, len(a))
		}
		return "(CAST(" + a[0] + " AS TIMESTAMP) - CAST(" + a[1] + " AS TIMESTAMP))", nil
	},
	"time_format": func(a []string, _ *funcEnv) (string, error) {
		if len(a) != 2 {
			return "", arity("TIME_FORMAT", 2, len(a))
		}
		f, err := strftimeFormat(a[1])
		if err != nil {
			return "", err
		}
		// strftime writes a time of day: a TIME outside 00:00:00 to
		// 23:59:59 (a negative or a long TIMEDIFF) is refused when met.
		// The time is written four times: not a parameter's ?, which
		// would then need four values.
		if strings.Contains(mask(a[0]), "?") {
			return "", notTranslated("TIME_FORMAT of a parameter (?)", "give the time as a literal")
		}
		iv := "CAST(" + a[0] + " AS INTERVAL)"
		return "CASE WHEN " + iv + " IS NULL THEN NULL WHEN " + iv + " >= INTERVAL 0 SECOND AND " + iv + " < INTERVAL 1 DAY " +
			"THEN strftime(TIMESTAMP '2000-01-01 00:00:00' + " + iv + ", " + f + ") " +
			"ELSE error('the dbtrail SQL port does not translate TIME_FORMAT of a time outside 00:00:00..23:59:59') END", nil
	},
	"convert_tz": func(a []string, _ *funcEnv) (string, error) {
		if len(a) != 3 {
			return "", arity("CONVERT_TZ", 3, len(a))
		}
		return convertTZ(a[0], a[1], a[2])
	},
	"locate": func(a []string, _ *funcEnv) (string, error) {
		// LOCATE(substr, str[, pos]): the first position of substr in str
		// at or after pos, 0 when none; compared as the connection's
		// collation (utf8mb4, case-insensitive) compares literals.
		if len(a) != 2 && len(a) != 3 {
			return "", arity("LOCATE", 2, len(a))
		}
		sub, str := "lower(CAST("+a[0]+" AS VARCHAR))", "lower(CAST("+a[1]+" AS VARCHAR))"
		if len(a) == 2 {
			return "strpos(" + str + ", " + sub + ")", nil
		}
		p := "CAST(" + a[2] + " AS BIGINT)"
		at := "strpos(substring(" + str + ", " + p + "), " + sub + ")"
		return "(CASE WHEN " + p + " < 1 THEN 0 WHEN " + at + " = 0 THEN 0 ELSE " + at + " + " + p + " - 1 END)", nil
	},
	"upper": func(a []string, _ *funcEnv) (string, error) { return textCall("upper", "UPPER", a) },
	"lower": func(a []string, _ *funcEnv) (string, error) { return textCall("lower", "LOWER", a) },
	"length": func(a []string, _ *funcEnv) (string, error) {
		if len(a) != 1 {
			return "", arity("LENGTH", 1, len(a))
		}
		return "strlen(CAST(" + a[0] + " AS VARCHAR))", nil
	},
	"database": func(a []string, env *funcEnv) (string, error) {
		if env.db == "" {
			return "CAST(NULL AS VARCHAR)", nil
		}
		return sqlString(env.db), nil
	},
	"user": func(a []string, env *funcEnv) (string, error) { return sqlString(env.user + "@localhost"), nil },
	"version": func(a []string, env *funcEnv) (string, error) {
		return sqlString(ServerVersion), nil
	},
}

// textCall is DuckDB's one-argument string function fn of a MySQL call
// (name), its argument as text: MySQL's string functions take numbers and
// times as their text, DuckDB's do not.
func textCall(fn, name string, a []string) (string, error) {
	if len(a) != 1 {
		return "", arity(name, 1, len(a))
	}
	return fn + "(CAST(" + a[0] + " AS VARCHAR))", nil
}

func init() {
	translated["schema"] = translated["database"]
	translated["ucase"] = translated["upper"]
	translated["lcase"] = translated["lower"]

	translated["octet_length"] = translated["length"]
	for _, n := range []string{"current_user", "session_user", "system_user"} {
		translated[n] = translated["user"]
	}
}

// callOf is the DuckDB text of MySQL function word called with args
// (nil: written without parentheses).
func callOf(word string, args []string, env *funcEnv) (string, error) {
	if kind, ok := timeWords[word]; ok {
		if len(args) > 1 || (len(args) == 1 && kind == "date") {
			return "", arity(strings.ToUpper(word), 0, len(args))
		}
		t := env.now.UTC()
		if env.loc != nil && !strings.HasPrefix(word, "utc_") {
			t = env.now.In(env.loc)
		}
		if kind == "date" {
			return "DATE '" + t.Format("2006-01-02") + "'", nil
		}
		layout := "2006-01-02 15:04:05"
		if kind == "time" {
			layout = "15:04:05"
		}
		if len(args) == 1 {
			fsp, err := strconv.Atoi(args[0])
			if err != nil || fsp < 0 || fsp > 6 {
				return "", mysql.NewError(mysql.ER_TOO_BIG_PRECISION, fmt.Sprintf("%s(%s): the precision is 0 to 6", strings.ToUpper(word), args[0]))
			}
			if fsp > 0 {
				layout += "." + strings.Repeat("0", fsp)
			}
			t = t.Truncate(time.Second / time.Duration(pow10(fsp)))
		}
		if kind == "time" {
			return "CAST('" + t.Format(layout) + "' AS INTERVAL)", nil
		}
		return "TIMESTAMP '" + t.Format(layout) + "'", nil
	}
	return translated[word](args, env)
}

// offset is the session's time_zone as seconds east of UTC, for fn (a
// conversion between a time and a Unix time); a named zone (whose offset
// changes) is an error naming fn.
func (env *funcEnv) offset(fn string) (int, error) {
	if env.loc == nil || env.loc == time.UTC {
		return 0, nil
	}
	if !tzOffset.MatchString(env.loc.String()) {
		return 0, notTranslated(fn+" in the time zone "+env.loc.String(), "the port converts Unix times by a fixed offset only: SET time_zone = '+HH:MM'")
	}
	_, off := time.Unix(0, 0).In(env.loc).Zone()
	return off, nil
}

// plusSeconds is " + n" (or " - n") of off seconds in units of 1/per
// second, or "" for none.
func plusSeconds(off int, per int64) string {
	switch n := int64(off) * per; {
	case n > 0:
		return " + " + strconv.FormatInt(n, 10)
	case n < 0:
		return " - " + strconv.FormatInt(-n, 10)
	}
	return ""
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func arity(fn string, want, got int) error {
	return mysql.NewError(mysql.ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, fmt.Sprintf("Incorrect parameter count in the call to native function '%s' (%d given, %d expected)", fn, got, want))
}

// coalesce is MySQL's IFNULL/COALESCE of args in DuckDB: MySQL answers
// text when the arguments mix a string with another type (IFNULL(d,
// 'none') of a DATETIME d), where DuckDB would cast the string to the
// other type; so with a string literal among them every argument is cast
// to text.
func coalesce(args []string) string {
	lit := false
	for _, a := range args {
		lit = lit || isStringLiteral(a)
	}
	if !lit {
		return "coalesce(" + strings.Join(args, ", ") + ")"
	}
	cast := make([]string, len(args))
	for i, a := range args {
		cast[i] = "CAST(" + a + " AS VARCHAR)"
	}
	return "coalesce(" + strings.Join(cast, ", ") + ")"
}

// joinText is MySQL's CONCAT of exprs in DuckDB: each as text, joined by
// ||, which is NULL when any is NULL (DuckDB's concat() skips NULLs).
func joinText(exprs []string) string {
	parts := make([]string, len(exprs))
	for i, e := range exprs {
		parts[i] = "CAST(" + e + " AS VARCHAR)"
	}
	return strings.Join(parts, " || ")
}

var (
	groupOrder = regexp.MustCompile(`(?i)\bORDER\s+BY\b`)
	groupSep   = regexp.MustCompile(`(?i)\bSEPARATOR\b`)
	distinct   = regexp.MustCompile(`(?i)^\s*DISTINCT\b`)
)

// groupConcat is GROUP_CONCAT([DISTINCT] expr[, expr…] [ORDER BY …]
// [SEPARATOR 'sep']) as DuckDB's string_agg: the exprs joined as CONCAT
// does (a row with a NULL one is skipped, as MySQL does), ',' by default.
// A result longer than the session's group_concat_max_len bytes, which
// MySQL would cut, fails the statement saying so (concatCapped).
func groupConcat(inner string, env *funcEnv) (string, error) {
	m := mask(inner)
	end := len(inner)
	sep := "','"
	if loc := topLevel(groupSep, m); loc != nil {
		sep = strings.TrimSpace(inner[loc[1]:])
		if !isStringLiteral(sep) {
			return "", notTranslated("GROUP_CONCAT's SEPARATOR "+sep, "the separator must be one string literal")
		}
		end = loc[0]
	}
	order := ""
	if loc := topLevel(groupOrder, m[:end]); loc != nil {
		o, err := rewriteFuncs(inner[loc[1]:end], env)
		if err != nil {
			return "", err
		}
		order = " ORDER BY " + strings.TrimSpace(o)
		end = loc[0]
	}
	exprText, dist := inner[:end], ""
	if loc := distinct.FindStringIndex(m[:end]); loc != nil {
		exprText, dist = inner[loc[1]:end], "DISTINCT "
	}
	var exprs []string
	for _, a := range splitArgs(exprText) {
		ra, err := rewriteFuncs(a, env)
		if err != nil {
			return "", err
		}
		exprs = append(exprs, strings.TrimSpace(ra))
	}
	if len(exprs) == 0 || exprs[0] == "" {
		return "", arity("GROUP_CONCAT", 1, 0)
	}
	return concatCapped("string_agg("+dist+joinText(exprs)+", "+sep+order+")", env.concatMax), nil
}

// defaultConcatMax is group_concat_max_len until the session sets it
// (MariaDB's default).
const defaultConcatMax = 1 << 20

// concatCapped is agg, a GROUP_CONCAT's string_agg, failing the statement
// when its value is longer than max bytes (0: defaultConcatMax): MySQL
// would cut it there (to whole characters, with a warning), an answer the
// port refuses rather than give another. DuckDB computes the repeated
// aggregate once.
func concatCapped(agg string, max int64) string {
	if max <= 0 {
		max = defaultConcatMax
	}
	why := fmt.Sprintf("GROUP_CONCAT result longer than group_concat_max_len (%d bytes): MySQL would cut it; the dbtrail SQL port refuses to answer otherwise (SET group_concat_max_len = a larger value)", max)
	return fmt.Sprintf("CASE WHEN strlen(%s) > %d THEN error('%s') ELSE %s END", agg, max, why, agg)
}

// strftimeFormat is DATE_FORMAT's format (one string literal) as a
// strftime format literal. A MySQL specifier strftime has no equal for is
// an error naming it; an unknown one is its letter, as in MySQL.
func strftimeFormat(lit string) (string, error) {
	if !isStringLiteral(lit) {
		return "", notTranslated("DATE_FORMAT with the format "+lit, "the format must be one string literal")
	}
	f := strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		spec := f[i]
		if s, ok := dateSpecs[spec]; ok {
			b.WriteString(s)
			continue
		}
		if why, ok := dateSpecsRefused[spec]; ok {
			return "", notTranslated(fmt.Sprintf("DATE_FORMAT's specifier %%%c", spec), why)
		}
		if spec == '%' {
			b.WriteString("%%")
		} else {
			b.WriteByte(spec)
		}
	}
	return sqlString(b.String()), nil
}
