package sqlport

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// systemVariables are the port's system variables with fixed values: the
// ones clients read on connect (SELECT @@name, SHOW VARIABLES). dbtrail_at
// and dbtrail_cut are the session's (handler.variable).
var systemVariables = map[string]any{
	"version":                         ServerVersion,
	"version_comment":                 "dbtrail time-travel SQL port (read-only)",
	"version_compile_os":              runtime.GOOS,
	"version_compile_machine":         runtime.GOARCH,
	"protocol_version":                int64(10),
	"max_allowed_packet":              int64(mysql.MaxPayloadLen),
	"net_buffer_length":               int64(16384),
	"autocommit":                      int64(1),
	"auto_increment_increment":        int64(1),
	"auto_increment_offset":           int64(1),
	"tx_isolation":                    "REPEATABLE-READ",
	"transaction_isolation":           "REPEATABLE-READ",
	"tx_read_only":                    int64(1),
	"transaction_read_only":           int64(1),
	"read_only":                       int64(1),
	"super_read_only":                 int64(1),
	"character_set_client":            "utf8mb4",
	"character_set_connection":        "utf8mb4",
	"character_set_results":           "utf8mb4",
	"character_set_server":            "utf8mb4",
	"character_set_database":          "utf8mb4",
	"character_set_system":            "utf8mb3",
	"collation_connection":            "utf8mb4_general_ci",
	"collation_server":                "utf8mb4_general_ci",
	"collation_database":              "utf8mb4_general_ci",
	"time_zone":                       "UTC",
	"system_time_zone":                "UTC",
	"sql_mode":                        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES",
	"lower_case_table_names":          int64(0),
	"lower_case_file_system":          "OFF",
	"init_connect":                    "",
	"interactive_timeout":             int64(28800),
	"wait_timeout":                    int64(28800),
	"net_write_timeout":               int64(60),
	"net_read_timeout":                int64(30),
	"license":                         "Apache-2.0",
	"performance_schema":              int64(0),
	"query_cache_size":                int64(0),
	"query_cache_type":                "OFF",
	"have_query_cache":                "NO",
	"have_ssl":                        "DISABLED",
	"have_openssl":                    "DISABLED",
	"default_storage_engine":          "dbtrail",
	"storage_engine":                  "dbtrail",
	"default_authentication_plugin":   mysql.AUTH_NATIVE_PASSWORD,
	"explicit_defaults_for_timestamp": "ON",
	"sql_auto_is_null":                int64(0),
	"sql_safe_updates":                int64(0),
	"sql_select_limit":                int64(-1 >> 1),
	"language":                        "english",
	"lc_messages":                     "en_US",
	"div_precision_increment":         int64(4),
	"group_concat_max_len":            int64(defaultConcatMax),
	"event_scheduler":                 "DISABLED",
	"local_infile":                    "OFF",
	"secure_file_priv":                nil,
}

// variableNames are every variable SHOW VARIABLES lists, sorted.
func variableNames() []string {
	names := []string{"dbtrail_at", "dbtrail_cut"}
	for n := range systemVariables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// variable is @@name's value (name lower case, without @@ and scope).
func (h *handler) variable(ctx context.Context, name string) (any, error) {
	switch name {
	case "dbtrail_at":
		if h.at.Kind != "" {
			return h.at.String(), nil
		}
		return "latest", nil
	case "dbtrail_cut":
		return h.cut(ctx)
	case "time_zone":
		return h.timeZoneName(), nil
	case "group_concat_max_len":
		return h.groupConcatMax(), nil
	}
	if v, ok := systemVariables[name]; ok {
		return v, nil
	}
	return nil, errRefused(mysql.ER_UNKNOWN_SYSTEM_VARIABLE, "Unknown system variable '%s'", name)
}

// showMeta are the SHOW statements the port answers beside SHOW
// DATABASES/TABLES/COLUMNS: VARIABLES, STATUS, WARNINGS, ERRORS, ENGINES,
// CHARSET, COLLATION, PLUGINS, each with LIKE 'pattern'. SHOW … WHERE is
// turned into a SELECT of information_schema (classify).
var showMeta = regexp.MustCompile(`(?is)^\s*SHOW\s+(?:(?:GLOBAL|SESSION|LOCAL)\s+)?(VARIABLES|STATUS|WARNINGS|ERRORS|COUNT\(\*\)\s+WARNINGS|COUNT\(\*\)\s+ERRORS|(?:STORAGE\s+)?ENGINES|CHARSET|CHARACTER\s+SET|COLLATION|PLUGINS|PRIVILEGES|GRANTS(?:\s+FOR\s+\S+)?|(?:FULL\s+)?TRIGGERS(?:\s+(?:FROM|IN)\s+\S+)?)(?:\s+LIKE\s+'((?:[^'\\]|\\.|'')*)')?\s*;?\s*$`)

// showWhere is SHOW VARIABLES/STATUS … WHERE cond.
var showWhere = regexp.MustCompile(`(?is)^\s*SHOW\s+(?:(?:GLOBAL|SESSION|LOCAL)\s+)?(VARIABLES|STATUS)\s+WHERE\s+(.*)$`)

// showWhereSelect is SHOW VARIABLES/STATUS WHERE cond as a SELECT of the
// port's information_schema, answered as a read.
func showWhereSelect(what, cond string) string {
	table := "SESSION_VARIABLES"
	if strings.EqualFold(what, "STATUS") {
		table = "SESSION_STATUS"
	}
	return "SELECT * FROM (SELECT VARIABLE_NAME AS `Variable_name`, VARIABLE_VALUE AS `Value` FROM information_schema." + table + ") AS v WHERE " + cond
}

// showMetaAnswer answers a SHOW matched by showMeta: what (single
// spaced, as written) and the LIKE pattern ("" for none).
func (h *handler) showMetaAnswer(ctx context.Context, what, like string) (*mysql.Result, error) {
	var names []string
	var rows [][]any
	key := strings.ToUpper(what)
	switch key {
	case "VARIABLES":
		names = []string{"Variable_name", "Value"}
		for _, n := range variableNames() {
			v, err := h.variable(ctx, n)
			if err != nil {
				return nil, err
			}
			rows = append(rows, []any{n, textValue(v)})
		}
	case "STATUS":
		names = []string{"Variable_name", "Value"}
		rows = [][]any{{"Ssl_cipher", ""}, {"Ssl_version", ""}}
	case "WARNINGS", "ERRORS":
		names = []string{"Level", "Code", "Message"}
	case "COUNT(*) WARNINGS", "COUNT(*) ERRORS":
		kind := strings.ToLower(strings.TrimSuffix(strings.Fields(key)[1], "S"))
		return rowsResult([]string{"@@session." + kind + "_count"}, [][]any{{int64(0)}}), nil
	case "ENGINES", "STORAGE ENGINES":
		names = []string{"Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"}
		rows, _ = enginesRows(nil)
	case "CHARSET", "CHARACTER SET":
		names = []string{"Charset", "Description", "Default collation", "Maxlen"}
		cs, _ := charsetRows(nil)
		for _, r := range cs {
			rows = append(rows, []any{r[0], r[2], r[1], r[3]})
		}
	case "COLLATION":
		names = []string{"Collation", "Charset", "Id", "Default", "Compiled", "Sortlen", "Pad_attribute"}
		rows, _ = collationRows(nil)
	case "PLUGINS":
		names = []string{"Name", "Status", "Type", "Library", "License"}
	case "PRIVILEGES":
		names = []string{"Privilege", "Context", "Comment"}
		rows = [][]any{{"Select", "Tables", "To retrieve rows from table"}}
	default:
		return h.showMetaMore(what, like)
	}
	return h.filtered(names, rows, like), nil
}

// showMetaMore answers SHOW GRANTS [FOR user] (the port grants SELECT on
// everything, to every user) and SHOW [FULL] TRIGGERS [FROM db] (the
// backup has none).
func (h *handler) showMetaMore(what, like string) (*mysql.Result, error) {
	key := strings.ToUpper(what)
	switch {
	case strings.HasPrefix(key, "GRANTS"):
		user := h.user
		if f := strings.Fields(what); len(f) == 3 {
			user = strings.Trim(f[2], "`'\"")
			if at := strings.IndexByte(user, '@'); at >= 0 {
				user = user[:at]
			}
		}
		return rowsResult([]string{"Grants for " + user + "@%"}, [][]any{{"GRANT SELECT ON *.* TO `" + user + "`@`%`"}}), nil
	case strings.Contains(key, "TRIGGERS"):
		return rowsResult([]string{"Trigger", "Event", "Table", "Statement", "Timing", "Created", "sql_mode", "Definer",
			"character_set_client", "collation_connection", "Database Collation"}, nil), nil
	}
	return nil, fmt.Errorf("sql port: SHOW %s: not answered", what)
}

// filtered is rows whose first value matches the LIKE pattern like ("":
// all).
func (h *handler) filtered(names []string, rows [][]any, like string) *mysql.Result {
	if like != "" {
		re := likePattern(strings.ReplaceAll(like, "''", "'"))
		var kept [][]any
		for _, r := range rows {
			if re.MatchString(fmt.Sprint(r[0])) {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	return rowsResult(names, rows)
}

// rowsResult is a text answer of rows (nil is NULL; numbers as text).
func rowsResult(names []string, rows [][]any) *mysql.Result {
	out := make([][]*string, len(rows))
	for i, r := range rows {
		out[i] = make([]*string, len(r))
		for j, v := range r {
			if v != nil {
				s := textValue(v)
				out[i][j] = &s
			}
		}
	}
	return stringResult(names, out)
}

func enginesRows(*rewriteEnv) ([][]any, error) {
	return [][]any{{"dbtrail", "DEFAULT", "the time-travel SQL port: read-only tables of a backup at a moment", "NO", "NO", "NO"}}, nil
}

// charsets are the character sets SHOW CHARSET and CHARACTER_SETS list:
// name, default collation, description, bytes a character at most.
var charsets = [][]any{
	{"ascii", "ascii_general_ci", "US ASCII", int64(1)},
	{"binary", "binary", "Binary pseudo charset", int64(1)},
	{"latin1", "latin1_swedish_ci", "cp1252 West European", int64(1)},
	{"utf8mb3", "utf8mb3_general_ci", "UTF-8 Unicode", int64(3)},
	{"utf8mb4", "utf8mb4_general_ci", "UTF-8 Unicode", int64(4)},
}

func charsetRows(*rewriteEnv) ([][]any, error) { return charsets, nil }

// collationRows are the collations of charsets: their default, and
// _bin, with MySQL's ids.
func collationRows(*rewriteEnv) ([][]any, error) {
	return [][]any{
		{"ascii_general_ci", "ascii", int64(11), "Yes", "Yes", int64(1), "PAD SPACE"},
		{"ascii_bin", "ascii", int64(65), "", "Yes", int64(1), "PAD SPACE"},
		{"binary", "binary", int64(63), "Yes", "Yes", int64(1), "NO PAD"},
		{"latin1_swedish_ci", "latin1", int64(8), "Yes", "Yes", int64(1), "PAD SPACE"},
		{"latin1_bin", "latin1", int64(47), "", "Yes", int64(1), "PAD SPACE"},
		{"utf8mb3_general_ci", "utf8mb3", int64(33), "Yes", "Yes", int64(1), "PAD SPACE"},
		{"utf8mb3_bin", "utf8mb3", int64(83), "", "Yes", int64(1), "PAD SPACE"},
		{"utf8mb4_general_ci", "utf8mb4", int64(45), "Yes", "Yes", int64(1), "PAD SPACE"},
		{"utf8mb4_bin", "utf8mb4", int64(46), "", "Yes", int64(1), "PAD SPACE"},
		{"utf8mb4_0900_ai_ci", "utf8mb4", int64(255), "", "Yes", int64(0), "NO PAD"},
	}, nil
}

// tablesResult is SHOW [FULL] TABLES' answer of db's tables names,
// filtered by its LIKE pattern; FULL adds Table_type.
func tablesResult(db string, names []string, p parsed) *mysql.Result {
	cols := []string{"Tables_in_" + db}
	if p.full {
		cols = append(cols, "Table_type")
	}
	var rows [][]any
	for _, n := range names {
		if p.like != "" && !likePattern(strings.ReplaceAll(p.like, "''", "'")).MatchString(n) {
			continue
		}
		r := []any{n}
		if p.full {
			r = append(r, "BASE TABLE")
		}
		rows = append(rows, r)
	}
	return rowsResult(cols, rows)
}

// setConcatMax is a group_concat_max_len assignment of a SET statement;
// namesConcatMax finds the name, assigned or not.
var (
	setConcatMax   = regexp.MustCompile(`(?is)(?:@@(?:session\.|global\.)?|\bSESSION\s+|\bLOCAL\s+|\b)group_concat_max_len\s*(?:=|:=)\s*(\d+|DEFAULT)\s*(?:,|;|$)`)
	namesConcatMax = regexp.MustCompile(`(?i)\bgroup_concat_max_len\b`)
	// globalConcatMax is a GLOBAL assignment: it sets no session's value.
	globalConcatMax = regexp.MustCompile(`(?i)(?:@@global\.|\bGLOBAL\s+)group_concat_max_len\b`)
)

// concatMaxOfSet is the group_concat_max_len SET statement stmt assigns
// to the session (0 and false when it assigns none; a GLOBAL one sets
// none, as in MySQL): a number, clamped to MySQL's range (4 to the
// largest int64 here), or DEFAULT. Any other value is error 1235:
// the port would not know the cut it must apply.
func concatMaxOfSet(stmt string) (int64, bool, error) {
	if globalConcatMax.MatchString(stmt) {
		return 0, false, nil // the server's default for new sessions: none here, accepted with no effect
	}
	m := setConcatMax.FindStringSubmatch(stmt)
	if m == nil {
		if namesConcatMax.MatchString(stmt) {
			return 0, false, notTranslated("this SET of group_concat_max_len", "give it a number or DEFAULT")
		}
		return 0, false, nil
	}
	if strings.EqualFold(m[1], "DEFAULT") {
		return defaultConcatMax, true, nil
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil { // more digits than an int64: as large as it goes
		v = math.MaxInt64
	}
	return max(v, 4), true, nil
}

// groupConcatMax is the session's group_concat_max_len.
func (h *handler) groupConcatMax() int64 {
	if h.concatMax > 0 {
		return h.concatMax
	}
	return defaultConcatMax
}
