package schema

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/types"
)

// inlineKeys are the keys a column definition declares itself.
type inlineKeys struct{ primary, unique bool }

// columnFromDef converts a parsed column definition. tableCharset is the
// charset a character column without its own gets. Nullability follows
// explicit_defaults_for_timestamp=ON (the default of MariaDB 10.10+ and
// MySQL 8): a column is nullable unless NOT NULL or PRIMARY KEY.
func columnFromDef(def *ast.ColumnDef, tableCharset string) (Column, inlineKeys, error) {
	col := Column{Name: def.Name.Name.O, Nullable: true}
	var keys inlineKeys
	marker, collation, jsonCheck := "", "", false
	for _, o := range def.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			col.Nullable = false
		case ast.ColumnOptionNull:
			col.Nullable = true
		case ast.ColumnOptionPrimaryKey:
			keys.primary = true
			col.Nullable = false
		case ast.ColumnOptionUniqKey:
			keys.unique = true
		case ast.ColumnOptionCollate:
			collation = o.StrValue
		case ast.ColumnOptionCheck:
			jsonCheck = jsonCheck || isJSONValid(o.Expr, col.Name)
		case ast.ColumnOptionGenerated:
			col.Generated = GeneratedVirtual
			if o.Stored {
				col.Generated = GeneratedStored
			}
		case ast.ColumnOptionComment:
			if v, ok := o.Expr.(ast.ValueExpr); ok {
				if s, ok := v.GetValue().(string); ok && strings.HasPrefix(s, markerPrefix) {
					marker = strings.TrimPrefix(s, markerPrefix)
				}
			}
		}
	}
	if collation == "" {
		collation = def.Tp.GetCollate()
	}
	cs := NormalizeCharset(def.Tp.GetCharset())
	switch {
	case cs != "":
	case collation != "" && CharsetOfCollation(collation) != "":
		cs = CharsetOfCollation(collation)
	case marker == "national":
		cs = "utf8mb3"
	default:
		cs = tableCharset
	}
	if err := setType(&col, def.Tp, cs); err != nil {
		return Column{}, keys, fmt.Errorf("column %q: %w", col.Name, err)
	}
	if marker != "" && marker != "national" {
		col.Type, col.Length, col.Charset = marker, 0, ""
	}
	if jsonCheck && col.Type == "longtext" {
		col.Type = "json" // MariaDB's JSON, as SHOW CREATE TABLE prints it
	}
	return col, keys, nil
}

// isJSONValid reports whether e is json_valid(col).
func isJSONValid(e ast.ExprNode, col string) bool {
	f, ok := e.(*ast.FuncCallExpr)
	if !ok || f.FnName.L != "json_valid" || len(f.Args) != 1 {
		return false
	}
	c, ok := f.Args[0].(*ast.ColumnNameExpr)
	return ok && strings.EqualFold(c.Name.Name.O, col)
}

// setType fills the type fields of col from a parsed field type; cs is the
// column's character set, used by character types.
func setType(col *Column, tp *types.FieldType, cs string) error {
	flen, dec := tp.GetFlen(), tp.GetDecimal()
	binary := cs == "binary"
	col.Unsigned = mysql.HasUnsignedFlag(tp.GetFlag())
	switch tp.GetType() {
	case mysql.TypeTiny:
		col.Type = "tinyint"
	case mysql.TypeShort:
		col.Type = "smallint"
	case mysql.TypeInt24:
		col.Type = "mediumint"
	case mysql.TypeLong:
		col.Type = "int"
	case mysql.TypeLonglong:
		col.Type = "bigint"
	case mysql.TypeNewDecimal:
		col.Type, col.Precision, col.Scale = "decimal", 10, 0
		if flen > 0 {
			col.Precision = flen
		}
		if dec > 0 {
			col.Scale = dec
		}
	case mysql.TypeFloat:
		col.Type = "float"
	case mysql.TypeDouble:
		col.Type = "double"
	case mysql.TypeBit:
		col.Type, col.Length = "bit", max(flen, 1)
	case mysql.TypeDate:
		col.Type = "date"
	case mysql.TypeDatetime:
		col.Type, col.FSP = "datetime", max(dec, 0)
	case mysql.TypeTimestamp:
		col.Type, col.FSP = "timestamp", max(dec, 0)
	case mysql.TypeDuration:
		col.Type, col.FSP = "time", max(dec, 0)
	case mysql.TypeYear:
		col.Type = "year"
	case mysql.TypeString:
		col.Type, col.Length = pick(binary, "binary", "char"), max(flen, 1)
	case mysql.TypeVarchar, mysql.TypeVarString:
		col.Type, col.Length = pick(binary, "varbinary", "varchar"), max(flen, 0)
	case mysql.TypeTinyBlob, mysql.TypeBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		col.Type = blobType(tp.GetType(), flen, cs)
	case mysql.TypeEnum, mysql.TypeSet:
		col.Type = pick(tp.GetType() == mysql.TypeEnum, "enum", "set")
		col.Elems = append([]string{}, tp.GetElems()...)
	case mysql.TypeJSON:
		col.Type, cs = "json", "utf8mb4"
	case mysql.TypeTiDBVectorFloat32:
		col.Type, col.Length = "vector", max(flen, 0)
	default:
		return fmt.Errorf("unsupported type %s", tp.String())
	}
	switch col.Type {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json":
		col.Charset = cs
	}
	if !signable(col.Type) {
		col.Unsigned = false
	}
	return nil
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// blobTypes are the TEXT/BLOB sizes in order with their capacity in bytes.
var blobTypes = []struct {
	tp       byte
	text     string
	blob     string
	capacity int64
}{
	{mysql.TypeTinyBlob, "tinytext", "tinyblob", 255},
	{mysql.TypeBlob, "text", "blob", 65535},
	{mysql.TypeMediumBlob, "mediumtext", "mediumblob", 16777215},
	{mysql.TypeLongBlob, "longtext", "longblob", 4294967295},
}

// blobType names a TEXT/BLOB type. TEXT(n) and BLOB(n) become the smallest
// type holding n characters (bytes for BLOB), as the server does.
func blobType(tp byte, flen int, cs string) string {
	binary := cs == "binary"
	need := int64(-1)
	if tp == mysql.TypeBlob && flen > 0 {
		need = int64(flen)
		if !binary {
			need *= int64(max(CharsetMaxLen(cs), 1))
		}
	}
	for _, b := range blobTypes {
		if (need < 0 && b.tp == tp) || (need >= 0 && need <= b.capacity) {
			return pick(binary, b.blob, b.text)
		}
	}
	return pick(binary, "longblob", "longtext")
}

// signable reports whether a column type can be UNSIGNED.
func signable(tp string) bool {
	switch tp {
	case "decimal", "float", "double", "tinyint", "smallint", "mediumint", "int", "bigint":
		return true
	}
	return false
}

// isCharType reports whether a column type stores characters in a charset.
func isCharType(tp string) bool {
	switch tp {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return true
	}
	return false
}

// convertCharset changes a column to charset cs as ALTER TABLE ... CONVERT
// TO CHARACTER SET does: TEXT types grow so they still hold as many
// characters as before.
func convertCharset(col *Column, cs string) {
	if !isCharType(col.Type) {
		return
	}
	oldMax, newMax := max(CharsetMaxLen(col.Charset), 1), max(CharsetMaxLen(cs), 1)
	if cs == "binary" { // character types become their binary twins, lengths in bytes
		switch col.Type {
		case "char", "varchar":
			col.Type, col.Length, col.Charset = pick(col.Type == "char", "binary", "varbinary"), col.Length*oldMax, ""
			return
		case "tinytext", "text", "mediumtext", "longtext":
			col.Type, col.Charset = strings.Replace(col.Type, "text", "blob", 1), ""
			return
		}
	}
	for i, b := range blobTypes {
		if col.Type != b.text || newMax <= oldMax {
			continue
		}
		need := b.capacity / int64(oldMax) * int64(newMax)
		for _, bigger := range blobTypes[i:] {
			if need <= bigger.capacity || bigger.text == "longtext" {
				col.Type = bigger.text
				break
			}
		}
		break
	}
	col.Charset = cs
}
