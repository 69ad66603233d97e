package sqlport

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
)

// infoSchema is MySQL's metadata schema; the port answers its tables from
// the session's views and catalog at the session's moment.
const infoSchema = "information_schema"

// isColumn is a column of an information_schema table: its name and
// DuckDB type.
type isColumn struct{ name, typ string }

// isTable is an information_schema table: its columns (MySQL 8's, in
// order) and its rows at the session's moment (nil: always empty: the
// backup holds no routines, views, triggers, events, grants…).
type isTable struct {
	cols []isColumn
	rows func(env *rewriteEnv) ([][]any, error)
}

func vcols(names string, typ string) []isColumn {
	var out []isColumn
	for _, n := range strings.Fields(names) {
		t := typ
		if i := strings.IndexByte(n, ':'); i >= 0 {
			n, t = n[:i], n[i+1:]
		}
		out = append(out, isColumn{n, t})
	}
	return out
}

// infoSchemaTables are the tables the port answers, by upper-case name.
var infoSchemaTables = map[string]isTable{
	"SCHEMATA": {vcols("CATALOG_NAME SCHEMA_NAME DEFAULT_CHARACTER_SET_NAME DEFAULT_COLLATION_NAME SQL_PATH DEFAULT_ENCRYPTION", "VARCHAR"), schemataRows},
	"TABLES": {vcols("TABLE_CATALOG TABLE_SCHEMA TABLE_NAME TABLE_TYPE ENGINE VERSION:BIGINT ROW_FORMAT TABLE_ROWS:BIGINT "+
		"AVG_ROW_LENGTH:BIGINT DATA_LENGTH:BIGINT MAX_DATA_LENGTH:BIGINT INDEX_LENGTH:BIGINT DATA_FREE:BIGINT AUTO_INCREMENT:BIGINT "+
		"CREATE_TIME:TIMESTAMP UPDATE_TIME:TIMESTAMP CHECK_TIME:TIMESTAMP TABLE_COLLATION CHECKSUM:BIGINT CREATE_OPTIONS TABLE_COMMENT", "VARCHAR"), tablesRows},
	"COLUMNS": {vcols("TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME ORDINAL_POSITION:BIGINT COLUMN_DEFAULT IS_NULLABLE DATA_TYPE "+
		"CHARACTER_MAXIMUM_LENGTH:BIGINT CHARACTER_OCTET_LENGTH:BIGINT NUMERIC_PRECISION:BIGINT NUMERIC_SCALE:BIGINT DATETIME_PRECISION:BIGINT "+
		"CHARACTER_SET_NAME COLLATION_NAME COLUMN_TYPE COLUMN_KEY EXTRA PRIVILEGES COLUMN_COMMENT GENERATION_EXPRESSION SRS_ID:BIGINT", "VARCHAR"), columnsRows},
	"KEY_COLUMN_USAGE": {vcols("CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME "+
		"ORDINAL_POSITION:BIGINT POSITION_IN_UNIQUE_CONSTRAINT:BIGINT REFERENCED_TABLE_SCHEMA REFERENCED_TABLE_NAME REFERENCED_COLUMN_NAME", "VARCHAR"), keyColumnRows},
	"STATISTICS": {vcols("TABLE_CATALOG TABLE_SCHEMA TABLE_NAME NON_UNIQUE:BIGINT INDEX_SCHEMA INDEX_NAME SEQ_IN_INDEX:BIGINT COLUMN_NAME "+
		"COLLATION CARDINALITY:BIGINT SUB_PART:BIGINT PACKED NULLABLE INDEX_TYPE COMMENT INDEX_COMMENT IS_VISIBLE EXPRESSION", "VARCHAR"), statisticsRows},
	"TABLE_CONSTRAINTS": {vcols("CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME TABLE_SCHEMA TABLE_NAME CONSTRAINT_TYPE ENFORCED", "VARCHAR"), constraintRows},
	"REFERENTIAL_CONSTRAINTS": {vcols("CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME UNIQUE_CONSTRAINT_CATALOG UNIQUE_CONSTRAINT_SCHEMA "+
		"UNIQUE_CONSTRAINT_NAME MATCH_OPTION UPDATE_RULE DELETE_RULE TABLE_NAME REFERENCED_TABLE_NAME", "VARCHAR"), nil},
	"ROUTINES": {vcols("SPECIFIC_NAME ROUTINE_CATALOG ROUTINE_SCHEMA ROUTINE_NAME ROUTINE_TYPE DATA_TYPE ROUTINE_BODY ROUTINE_DEFINITION "+
		"EXTERNAL_NAME EXTERNAL_LANGUAGE PARAMETER_STYLE IS_DETERMINISTIC SQL_DATA_ACCESS SQL_PATH SECURITY_TYPE CREATED:TIMESTAMP "+
		"LAST_ALTERED:TIMESTAMP SQL_MODE ROUTINE_COMMENT DEFINER CHARACTER_SET_CLIENT COLLATION_CONNECTION DATABASE_COLLATION", "VARCHAR"), nil},
	"PARAMETERS": {vcols("SPECIFIC_CATALOG SPECIFIC_SCHEMA SPECIFIC_NAME ORDINAL_POSITION:BIGINT PARAMETER_MODE PARAMETER_NAME DATA_TYPE "+
		"CHARACTER_MAXIMUM_LENGTH:BIGINT NUMERIC_PRECISION:BIGINT NUMERIC_SCALE:BIGINT DTD_IDENTIFIER ROUTINE_TYPE", "VARCHAR"), nil},
	"VIEWS": {vcols("TABLE_CATALOG TABLE_SCHEMA TABLE_NAME VIEW_DEFINITION CHECK_OPTION IS_UPDATABLE DEFINER SECURITY_TYPE "+
		"CHARACTER_SET_CLIENT COLLATION_CONNECTION", "VARCHAR"), nil},
	"TRIGGERS": {vcols("TRIGGER_CATALOG TRIGGER_SCHEMA TRIGGER_NAME EVENT_MANIPULATION EVENT_OBJECT_SCHEMA EVENT_OBJECT_TABLE "+
		"ACTION_ORDER:BIGINT ACTION_STATEMENT ACTION_TIMING CREATED:TIMESTAMP DEFINER", "VARCHAR"), nil},
	"EVENTS": {vcols("EVENT_CATALOG EVENT_SCHEMA EVENT_NAME DEFINER EVENT_TYPE STATUS EVENT_DEFINITION", "VARCHAR"), nil},
	"PARTITIONS": {vcols("TABLE_CATALOG TABLE_SCHEMA TABLE_NAME PARTITION_NAME SUBPARTITION_NAME PARTITION_ORDINAL_POSITION:BIGINT "+
		"PARTITION_METHOD PARTITION_EXPRESSION PARTITION_DESCRIPTION TABLE_ROWS:BIGINT", "VARCHAR"), nil},
	"CHECK_CONSTRAINTS":   {vcols("CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME CHECK_CLAUSE", "VARCHAR"), nil},
	"USER_PRIVILEGES":     {vcols("GRANTEE TABLE_CATALOG PRIVILEGE_TYPE IS_GRANTABLE", "VARCHAR"), nil},
	"SCHEMA_PRIVILEGES":   {vcols("GRANTEE TABLE_CATALOG TABLE_SCHEMA PRIVILEGE_TYPE IS_GRANTABLE", "VARCHAR"), nil},
	"TABLE_PRIVILEGES":    {vcols("GRANTEE TABLE_CATALOG TABLE_SCHEMA TABLE_NAME PRIVILEGE_TYPE IS_GRANTABLE", "VARCHAR"), nil},
	"COLUMN_PRIVILEGES":   {vcols("GRANTEE TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME PRIVILEGE_TYPE IS_GRANTABLE", "VARCHAR"), nil},
	"ENGINES":             {vcols("ENGINE SUPPORT COMMENT TRANSACTIONS XA SAVEPOINTS", "VARCHAR"), enginesRows},
	"CHARACTER_SETS":      {vcols("CHARACTER_SET_NAME DEFAULT_COLLATE_NAME DESCRIPTION MAXLEN:BIGINT", "VARCHAR"), charsetRows},
	"COLLATIONS":          {vcols("COLLATION_NAME CHARACTER_SET_NAME ID:BIGINT IS_DEFAULT IS_COMPILED SORTLEN:BIGINT PAD_ATTRIBUTE", "VARCHAR"), collationRows},
	"PLUGINS":             {vcols("PLUGIN_NAME PLUGIN_VERSION PLUGIN_STATUS PLUGIN_TYPE PLUGIN_TYPE_VERSION PLUGIN_LIBRARY PLUGIN_LIBRARY_VERSION PLUGIN_AUTHOR PLUGIN_DESCRIPTION PLUGIN_LICENSE LOAD_OPTION", "VARCHAR"), nil},
	"PROCESSLIST":         {vcols("ID:BIGINT USER HOST DB COMMAND TIME:BIGINT STATE INFO", "VARCHAR"), nil},
	"INNODB_TRX":          {vcols("trx_id trx_state trx_started:TIMESTAMP trx_mysql_thread_id:BIGINT trx_query", "VARCHAR"), nil},
	"GLOBAL_VARIABLES":    {vcols("VARIABLE_NAME VARIABLE_VALUE", "VARCHAR"), variableRows},
	"SESSION_VARIABLES":   {vcols("VARIABLE_NAME VARIABLE_VALUE", "VARCHAR"), variableRows},
	"SESSION_STATUS":      {vcols("VARIABLE_NAME VARIABLE_VALUE", "VARCHAR"), nil},
	"GLOBAL_STATUS":       {vcols("VARIABLE_NAME VARIABLE_VALUE", "VARCHAR"), nil},
	"KEYWORDS":            {vcols("WORD RESERVED:BIGINT", "VARCHAR"), nil},
	"OPTIMIZER_TRACE":     {vcols("QUERY TRACE", "VARCHAR"), nil},
	"FILES":               {vcols("FILE_ID:BIGINT FILE_NAME FILE_TYPE TABLESPACE_NAME TABLE_SCHEMA TABLE_NAME ENGINE", "VARCHAR"), nil},
	"RESOURCE_GROUPS":     {vcols("RESOURCE_GROUP_NAME RESOURCE_GROUP_TYPE RESOURCE_GROUP_ENABLED VCPU_IDS THREAD_PRIORITY:BIGINT", "VARCHAR"), nil},
	"ST_GEOMETRY_COLUMNS": {vcols("TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME SRS_NAME SRS_ID:BIGINT GEOMETRY_TYPE_NAME", "VARCHAR"), nil},
}

// infoSchemaTable is information_schema.name as a DuckDB subquery of
// literal rows; a table the port does not answer is error 1109.
func (env *rewriteEnv) infoSchemaTable(name string) (string, error) {
	t, ok := infoSchemaTables[strings.ToUpper(name)]
	if !ok {
		return "", mysql.NewError(mysql.ER_UNKNOWN_TABLE, fmt.Sprintf("Unknown table '%s' in information_schema (the dbtrail SQL port answers %s)", name, strings.Join(infoSchemaList, ", ")))
	}
	var rows [][]any
	if t.rows != nil {
		var err error
		if rows, err = t.rows(env); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.WriteString("(SELECT ")
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "CAST(c%d AS %s) AS %s", i, c.typ, views.QuoteIdent(c.name))
	}
	b.WriteString(" FROM (VALUES ")
	if len(rows) == 0 {
		rows = [][]any{make([]any, len(t.cols))}
	}
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for j, v := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			if v == nil {
				b.WriteString("CAST(NULL AS " + t.cols[j].typ + ")")
			} else {
				b.WriteString(sqlValue(v))
			}
		}
		b.WriteString(")")
	}
	b.WriteString(") AS v(")
	for i := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "c%d", i)
	}
	b.WriteString(")")
	if t.rows == nil || len(rows) == 1 && rows[0][0] == nil {
		b.WriteString(" WHERE false")
	}
	b.WriteString(")")
	return b.String(), nil
}

// infoSchemaList are infoSchemaTables' names, sorted.
var infoSchemaList []string

func init() {
	for n := range infoSchemaTables {
		infoSchemaList = append(infoSchemaList, n)
	}
	sort.Strings(infoSchemaList)
}

const defCatalog = "def"

func schemataRows(env *rewriteEnv) ([][]any, error) {
	rows := [][]any{{defCatalog, infoSchema, "utf8mb3", "utf8mb3_general_ci", nil, "NO"}}
	seen := map[string]bool{}
	for _, t := range env.tables {
		if !seen[t.Schema] {
			seen[t.Schema] = true
			rows = append(rows, []any{defCatalog, t.Schema, "utf8mb4", "utf8mb4_general_ci", nil, "NO"})
		}
	}
	return rows, nil
}

func tablesRows(env *rewriteEnv) ([][]any, error) {
	var rows [][]any
	for _, t := range env.tables {
		rows = append(rows, []any{defCatalog, t.Schema, t.Table, "BASE TABLE", "dbtrail", int64(10), "Dynamic", nil,
			nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, "", "backup of " + t.Schema + "." + t.Table + " (read-only)"})
	}
	for _, n := range infoSchemaList {
		rows = append(rows, []any{defCatalog, infoSchema, n, "SYSTEM VIEW", nil, int64(10), nil, nil,
			nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, "", ""})
	}
	return rows, nil
}

func columnsRows(env *rewriteEnv) ([][]any, error) {
	var rows [][]any
	for _, t := range env.tables {
		info, err := env.table(t.Schema, t.Table)
		if err != nil {
			return nil, err
		}
		for i, name := range t.Columns {
			d := schema.Column{Name: name, Type: "longtext", Nullable: true, Charset: "utf8mb4"}
			if i < len(t.Defs) {
				d = t.Defs[i]
			}
			nullable := "NO"
			if d.Nullable {
				nullable = "YES"
			}
			var charset, collation any
			if isText(d) {
				charset, collation = d.Charset, info.collations[name]
				if collation == "" {
					collation = nil
				}
			}
			extra := ""
			switch d.Generated {
			case schema.GeneratedStored:
				extra = "STORED GENERATED"
			case schema.GeneratedVirtual:
				extra = "VIRTUAL GENERATED"
			}
			charLen, octetLen, prec, scale, dtPrec := columnSizes(d)
			rows = append(rows, []any{defCatalog, t.Schema, t.Table, name, int64(i + 1), nil, nullable, d.Type,
				charLen, octetLen, prec, scale, dtPrec, charset, collation, snapshot.MySQLType(&d), keyOf(info.def, name),
				extra, "select", "", "", nil})
		}
	}
	return rows, nil
}

// columnSizes are COLUMNS' CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH,
// NUMERIC_PRECISION, NUMERIC_SCALE and DATETIME_PRECISION of d (nil where
// MySQL has NULL).
func columnSizes(d schema.Column) (charLen, octetLen, prec, scale, dtPrec any) {
	perChar := int64(4)
	switch d.Charset {
	case "latin1", "ascii", "binary":
		perChar = 1
	case "utf8mb3", "utf8":
		perChar = 3
	}
	chars := func(n int64) { charLen, octetLen = n, n*perChar }
	switch d.Type {
	case "char", "varchar":
		chars(int64(d.Length))
	case "binary", "varbinary":
		charLen, octetLen = int64(d.Length), int64(d.Length)
	case "tinytext", "tinyblob":
		charLen, octetLen = int64(255), int64(255)
	case "text", "blob":
		charLen, octetLen = int64(65535), int64(65535)
	case "mediumtext", "mediumblob":
		charLen, octetLen = int64(16777215), int64(16777215)
	case "longtext", "longblob", "json":
		charLen, octetLen = int64(4294967295), int64(4294967295)
	case "tinyint", "smallint", "mediumint", "int", "bigint":
		p := map[string]int64{"tinyint": 3, "smallint": 5, "mediumint": 7, "int": 10, "bigint": 19}[d.Type]
		if d.Type == "bigint" && d.Unsigned {
			p = 20
		}
		prec, scale = p, int64(0)
	case "decimal":
		prec, scale = int64(d.Precision), int64(d.Scale)
	case "float":
		prec = int64(12)
	case "double":
		prec = int64(22)
	case "bit":
		prec = int64(d.Length)
	case "datetime", "timestamp", "time":
		dtPrec = int64(d.FSP)
	}
	return
}

// indexRows calls f for each column of each index of the tables' stored
// definitions (generated and prefix parts included as the index has them).
func indexRows(env *rewriteEnv, f func(t views.TableRef, ix schema.Index, seq int, col string)) error {
	for _, t := range env.tables {
		info, err := env.table(t.Schema, t.Table)
		if err != nil {
			return err
		}
		def := info.def
		if def == nil {
			continue
		}
		for _, ix := range def.Indexes {
			for i, c := range ix.Columns {
				f(t, ix, i+1, c)
			}
		}
	}
	return nil
}

func indexName(ix schema.Index) string {
	if ix.Primary {
		return "PRIMARY"
	}
	return ix.Name
}

func keyColumnRows(env *rewriteEnv) ([][]any, error) {
	var rows [][]any
	err := indexRows(env, func(t views.TableRef, ix schema.Index, seq int, col string) {
		if ix.Primary || ix.Unique {
			rows = append(rows, []any{defCatalog, t.Schema, indexName(ix), defCatalog, t.Schema, t.Table, col, int64(seq), nil, nil, nil, nil})
		}
	})
	return rows, err
}

func constraintRows(env *rewriteEnv) ([][]any, error) {
	var rows [][]any
	err := indexRows(env, func(t views.TableRef, ix schema.Index, seq int, col string) {
		if seq != 1 || !(ix.Primary || ix.Unique) {
			return
		}
		kind := "UNIQUE"
		if ix.Primary {
			kind = "PRIMARY KEY"
		}
		rows = append(rows, []any{defCatalog, t.Schema, indexName(ix), t.Schema, t.Table, kind, "YES"})
	})
	return rows, err
}

func statisticsRows(env *rewriteEnv) ([][]any, error) {
	var rows [][]any
	err := indexRows(env, func(t views.TableRef, ix schema.Index, seq int, col string) {
		nonUnique := int64(1)
		if ix.Primary || ix.Unique {
			nonUnique = 0
		}
		nullable := ""
		for i, c := range t.Columns {
			if c == col && i < len(t.Defs) && t.Defs[i].Nullable {
				nullable = "YES"
			}
		}
		rows = append(rows, []any{defCatalog, t.Schema, t.Table, nonUnique, t.Schema, indexName(ix), int64(seq), col,
			"A", nil, nil, nil, nullable, "BTREE", "", "", "YES", nil})
	})
	return rows, err
}

func variableRows(env *rewriteEnv) ([][]any, error) {
	var rows [][]any
	for _, n := range variableNames() {
		v, err := env.funcs.variable(n)
		if err != nil {
			return nil, err
		}
		rows = append(rows, []any{n, textValue(v)})
	}
	return rows, nil
}

// textValue is a variable's value as SHOW VARIABLES writes it.
func textValue(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
