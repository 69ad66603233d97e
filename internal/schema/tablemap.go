package schema

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// MariaDB's compressed column types (binlog type codes). go-mysql decodes
// neither their metadata nor their rows.
const (
	typeBlobCompressed    byte = 140
	typeVarcharCompressed byte = 141
)

// geometryNames maps the binlog's geometry subtype codes to type names.
var geometryNames = []string{"geometry", "point", "linestring", "polygon", "multipoint",
	"multilinestring", "multipolygon", "geometrycollection"}

// FromTableMap builds the definition of schemaName.table from a table map
// event written with binlog_row_metadata=FULL: column names, types and
// their metadata, signedness, charsets, ENUM/SET labels, primary key and
// nullability. hint, which may be nil, is a previous definition of the same
// table: where a column of the same name has a logical type the binlog
// cannot express (UUID and INET6 arrive as binary(16), INET4 as binary(4),
// MariaDB's JSON as longtext, geometry subtypes), its type is kept, and its
// indexes are kept (so its unique key, which the server logs as the primary
// key when the table has none, stays KeyUnique). The table's default
// charset is hint's, else the most common charset of its character columns.
// Without column names in the event, hint's names are used if it has as
// many columns; otherwise FromTableMap fails.
func FromTableMap(schemaName, table string, ev *replication.TableMapEvent, hint *Table) (*Table, error) {
	n := int(ev.ColumnCount)
	if len(ev.ColumnType) != n || len(ev.ColumnMeta) != n {
		return nil, fmt.Errorf("table map of %s.%s: %d columns but %d types and %d metadata entries",
			schemaName, table, n, len(ev.ColumnType), len(ev.ColumnMeta))
	}
	names := ev.ColumnNameString()
	if len(names) != n {
		if hint == nil || len(hint.Columns) != n {
			return nil, fmt.Errorf("table map of %s.%s carries no column names (binlog_row_metadata is not FULL) and no definition with %d columns is known",
				schemaName, table, n)
		}
		names = hint.ColumnNames()
	}
	unsigned := ev.UnsignedMap()
	collations := ev.CollationMap()
	enumSetCollations := ev.EnumSetCollationMap()
	enums, sets := ev.EnumStrValueMap(), ev.SetStrValueMap()
	geoms := ev.GeometryTypeMap()
	t := &Table{Schema: schemaName, Name: table, Columns: make([]Column, n)}
	for i := 0; i < n; i++ {
		col := Column{Name: names[i], Unsigned: unsigned[i]}
		if ok, null := ev.Nullable(i); ok {
			col.Nullable = null
		}
		coll, hasColl := collations[i]
		if c, ok := enumSetCollations[i]; ok {
			coll, hasColl = c, true
		}
		cs := ""
		if hasColl {
			cs = CharsetOfCollationID(coll)
		}
		if err := binlogType(&col, ev.ColumnType[i], ev.ColumnMeta[i], cs, hasColl); err != nil {
			return nil, fmt.Errorf("table map of %s.%s, column %q: %w", schemaName, table, col.Name, err)
		}
		switch col.Type {
		case "enum":
			col.Elems = append([]string{}, enums[i]...)
		case "set":
			col.Elems = append([]string{}, sets[i]...)
		case "geometry":
			if g, ok := geoms[i]; ok && int(g) < len(geometryNames) {
				col.Type = geometryNames[g]
			}
		}
		t.Columns[i] = applyHint(col, hint)
	}
	if cs := ev.DefaultCharset; len(cs) > 0 {
		t.Charset = CharsetOfCollationID(cs[0])
	}
	if hint != nil && hint.Charset != "" {
		t.Charset = hint.Charset
	}
	if len(ev.PrimaryKey) > 0 && !promotedUnique(hint, ev.PrimaryKey, names) {
		pk := Index{Name: primaryName, Primary: true, Unique: true}
		for j, c := range ev.PrimaryKey {
			if int(c) >= n {
				return nil, fmt.Errorf("table map of %s.%s: primary key column %d of %d", schemaName, table, c, n)
			}
			pk.Columns = append(pk.Columns, names[c])
			if j < len(ev.PrimaryKeyPrefix) && ev.PrimaryKeyPrefix[j] > 0 {
				pk.Partial = true
			}
		}
		t.Indexes = append(t.Indexes, pk)
	}
	if hint != nil {
		for _, ix := range hint.Indexes {
			if !ix.Primary && indexPosition(t, ix.Name) < 0 && hasColumns(t, ix.Columns) {
				t.Indexes = append(t.Indexes, Index{Name: ix.Name, Columns: append([]string(nil), ix.Columns...),
					Unique: ix.Unique, Partial: ix.Partial})
			}
		}
	}
	ChooseKey(t)
	return t, nil
}

// promotedUnique reports whether the event's primary key is the hint's
// unique key: with no PRIMARY KEY the server logs the unique index it
// promoted as the primary key.
func promotedUnique(hint *Table, pk []uint64, names []string) bool {
	if hint == nil || hint.KeyKind != KeyUnique || len(hint.Key) != len(pk) {
		return false
	}
	for i, c := range pk {
		if int(c) >= len(names) || !strings.EqualFold(hint.Key[i], names[c]) {
			return false
		}
	}
	return true
}

func hasColumns(t *Table, cols []string) bool {
	for _, c := range cols {
		if t.ColumnIndex(c) < 0 {
			return false
		}
	}
	return true
}

// applyHint returns col with the logical type of the hint's column of the
// same name when the binlog shows that type in its physical form.
func applyHint(col Column, hint *Table) Column {
	if hint == nil {
		return col
	}
	i := hint.ColumnIndex(col.Name)
	if i < 0 {
		return col
	}
	h := hint.Columns[i]
	ok := false
	switch h.Type {
	case "uuid", "inet6":
		ok = col.Type == "binary" && col.Length == 16
	case "inet4":
		ok = col.Type == "binary" && col.Length == 4
	case "json":
		ok = col.Type == "longtext" || col.Type == "longblob" || col.Type == "json"
	case "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		ok = col.Type == "geometry"
	case "vector":
		ok = col.Type == "varbinary" || col.Type == "vector"
	}
	if !ok {
		return col
	}
	h.Name, h.Nullable = col.Name, col.Nullable
	h.Elems = append([]string(nil), h.Elems...)
	return h
}

// binlogType sets col's type from a binlog column type, its metadata and
// charset (cs, "" when the event carries none; hasCS says whether it did).
func binlogType(col *Column, tp byte, meta uint16, cs string, hasCS bool) error {
	binary := cs == "binary"
	switch tp {
	case mysql.MYSQL_TYPE_TINY:
		col.Type = "tinyint"
	case mysql.MYSQL_TYPE_SHORT:
		col.Type = "smallint"
	case mysql.MYSQL_TYPE_INT24:
		col.Type = "mediumint"
	case mysql.MYSQL_TYPE_LONG:
		col.Type = "int"
	case mysql.MYSQL_TYPE_LONGLONG:
		col.Type = "bigint"
	case mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL:
		col.Type, col.Precision, col.Scale = "decimal", int(meta>>8), int(meta&0xff)
	case mysql.MYSQL_TYPE_FLOAT:
		col.Type = "float"
	case mysql.MYSQL_TYPE_DOUBLE:
		col.Type = "double"
	case mysql.MYSQL_TYPE_BIT:
		col.Type, col.Length = "bit", int(meta>>8)*8+int(meta&0xff)
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		col.Type = "date"
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		col.Type, col.FSP = "datetime", int(meta)
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		col.Type, col.FSP = "timestamp", int(meta)
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		col.Type, col.FSP = "time", int(meta)
	case mysql.MYSQL_TYPE_YEAR:
		col.Type = "year"
	case typeVarcharCompressed, typeBlobCompressed:
		return fmt.Errorf("MariaDB COMPRESSED column (binlog type %d): its metadata and rows cannot be decoded", tp)
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		col.Type, col.Length = pick(binary, "varbinary", "varchar"), chars(int(meta), cs)
	case mysql.MYSQL_TYPE_STRING:
		real, length := stringMeta(meta)
		switch real {
		case mysql.MYSQL_TYPE_ENUM:
			col.Type = "enum"
		case mysql.MYSQL_TYPE_SET:
			col.Type = "set"
		default:
			col.Type, col.Length = pick(binary, "binary", "char"), chars(length, cs)
		}
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB,
		mysql.MYSQL_TYPE_LONG_BLOB:
		if meta < 1 || meta > 4 {
			return fmt.Errorf("blob with length size %d", meta)
		}
		b := blobTypes[meta-1]
		col.Type = pick(binary || !hasCS, b.blob, b.text)
	case mysql.MYSQL_TYPE_JSON:
		col.Type = "json"
	case mysql.MYSQL_TYPE_GEOMETRY:
		col.Type = "geometry"
	case mysql.MYSQL_TYPE_ENUM:
		col.Type = "enum"
	case mysql.MYSQL_TYPE_SET:
		col.Type = "set"
	case mysql.MYSQL_TYPE_VECTOR:
		col.Type = "vector"
	default:
		return fmt.Errorf("unsupported binlog column type %d", tp)
	}
	if isCharType(col.Type) {
		col.Charset = cs
	}
	if !signable(col.Type) {
		col.Unsigned = false
	}
	return nil
}

// stringMeta decodes MYSQL_TYPE_STRING metadata: the real type (STRING,
// ENUM or SET) and the length in bytes, whose bits 8 and 9 are stored
// inverted in the real type byte for lengths above 255.
func stringMeta(meta uint16) (byte, int) {
	real, length := byte(meta>>8), int(meta&0xff)
	if real != 0 && real&0x30 != 0x30 {
		length |= int((real&0x30)^0x30) << 4
		real |= 0x30
	}
	return real, length
}

// chars converts a length in bytes to characters of cs.
func chars(bytes int, cs string) int {
	if m := CharsetMaxLen(cs); m > 1 {
		return bytes / m
	}
	return bytes
}

// TableMapMismatchError says a table map event disagrees with the schema
// history's definition of its table. The caller adds the binlog position.
type TableMapMismatchError struct {
	Table    string // schema.table
	Column   int    // 0-based column position, -1 for the whole table
	Expected string // from schema history
	Got      string // from the table map
}

func (e *TableMapMismatchError) Error() string {
	where := "table " + e.Table
	if e.Column >= 0 {
		where += fmt.Sprintf(", column %d", e.Column+1)
	}
	return fmt.Sprintf("%s: schema history and binlog table map differ: expected %s, got %s", where, e.Expected, e.Got)
}

// CheckTableMap cross-checks a definition against a table map event of the
// same table: the event's schema and table name (when it has them) and
// column count must match and, when the event carries column names
// (binlog_row_metadata=FULL), the names in order (case-insensitive) and each
// column's type family (integer, decimal, float, bit, year, temporal,
// string, enum, set, json, geometry...) too. The error is a
// *TableMapMismatchError naming the table, the column and what differs.
func CheckTableMap(t *Table, ev *replication.TableMapEvent) error {
	q := t.QualifiedName()
	if s, n := string(ev.Schema), string(ev.Table); (s != "" || n != "") && (s != t.Schema || n != t.Name) {
		return &TableMapMismatchError{Table: q, Column: -1, Expected: "table " + q, Got: "table " + s + "." + n}
	}
	if int(ev.ColumnCount) != len(t.Columns) || len(ev.ColumnType) != len(t.Columns) {
		return &TableMapMismatchError{Table: q, Column: -1,
			Expected: fmt.Sprintf("%d columns (%s)", len(t.Columns), strings.Join(t.ColumnNames(), ", ")),
			Got:      fmt.Sprintf("%d columns%s", ev.ColumnCount, nameList(ev))}
	}
	names := ev.ColumnNameString()
	if len(names) == 0 {
		return nil
	}
	for i, c := range t.Columns {
		if i < len(names) && !strings.EqualFold(c.Name, names[i]) {
			return &TableMapMismatchError{Table: q, Column: i, Expected: fmt.Sprintf("name %q", c.Name), Got: fmt.Sprintf("name %q", names[i])}
		}
	}
	for i, c := range t.Columns {
		var got Column
		if err := binlogType(&got, ev.ColumnType[i], ev.ColumnMeta[i], "", true); err != nil {
			return &TableMapMismatchError{Table: q, Column: i, Expected: fmt.Sprintf("%q of type %s", c.Name, c.Type), Got: err.Error()}
		}
		if !familiesMatch(typeFamily(c.Type), typeFamily(got.Type)) {
			return &TableMapMismatchError{Table: q, Column: i,
				Expected: fmt.Sprintf("%q of type %s", c.Name, c.Type), Got: fmt.Sprintf("%q of type %s", names[i], got.Type)}
		}
	}
	return nil
}

func nameList(ev *replication.TableMapEvent) string {
	if names := ev.ColumnNameString(); len(names) > 0 {
		return " (" + strings.Join(names, ", ") + ")"
	}
	return ""
}

// typeFamily groups types whose values decode and store alike.
func typeFamily(tp string) string {
	switch tp {
	case "tinyint", "smallint", "mediumint", "int", "bigint":
		return "integer"
	case "float", "double":
		return "float"
	case "date", "datetime", "timestamp", "time":
		return "temporal"
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext",
		"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "uuid", "inet6", "inet4":
		return "string"
	case "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		return "geometry"
	}
	return tp // decimal, bit, year, enum, set, json, geometry, vector
}

// familiesMatch compares a definition's family with a binlog's: MariaDB
// logs JSON as longtext and VECTOR as varbinary.
func familiesMatch(def, bin string) bool {
	return def == bin || (def == "json" && bin == "string") || (def == "vector" && bin == "string")
}
