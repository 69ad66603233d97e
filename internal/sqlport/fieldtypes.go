package sqlport

import (
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// fieldOfColumn is the MySQL field of a result column named name that
// shows the table column src: its type, length, decimals, character set
// and flags from the stored definition, as the source server sends them
// (MariaDB's forms: JSON as LONGTEXT, UUID/INET6/INET4 as strings); a
// text column's character set number is its own collation's
// (collationID), which wire turns into the session's.
func fieldOfColumn(name string, src *source) *mysql.Field {
	c := src.col
	f := &mysql.Field{Name: []byte(name), OrgName: []byte(c.Name), Schema: []byte(src.schema),
		Table: []byte(src.table), OrgTable: []byte(src.table), Charset: collationID(c, src.collation)}
	binaryType := func(t uint8, length int) {
		f.Type, f.Charset, f.ColumnLength = t, charsetBinary, uint32(length)
		f.Flag |= mysql.BINARY_FLAG
	}
	text := func(t uint8, chars int) {
		f.Type, f.ColumnLength = t, capLength(chars*4)
		if c.Charset == "binary" {
			binaryType(t, chars)
		}
	}
	switch c.Type {
	case "tinyint":
		integer(f, c, mysql.MYSQL_TYPE_TINY, 4)
	case "smallint":
		integer(f, c, mysql.MYSQL_TYPE_SHORT, 6)
	case "mediumint":
		integer(f, c, mysql.MYSQL_TYPE_INT24, 9)
	case "int", "integer":
		integer(f, c, mysql.MYSQL_TYPE_LONG, 11)
	case "bigint":
		integer(f, c, mysql.MYSQL_TYPE_LONGLONG, 20)
	case "year":
		f.Type, f.Charset, f.ColumnLength = mysql.MYSQL_TYPE_YEAR, charsetBinary, 4
		f.Flag |= mysql.UNSIGNED_FLAG | mysql.ZEROFILL_FLAG | mysql.NUM_FLAG
	case "decimal":
		f.Type, f.Charset, f.Decimal = mysql.MYSQL_TYPE_NEWDECIMAL, charsetBinary, uint8(c.Scale)
		f.ColumnLength = uint32(c.Precision + 1)
		if c.Scale > 0 {
			f.ColumnLength++
		}
		f.Flag |= mysql.NUM_FLAG
		if c.Unsigned {
			f.Flag |= mysql.UNSIGNED_FLAG
			f.ColumnLength--
		}
	case "float":
		f.Type, f.Charset, f.ColumnLength, f.Decimal = mysql.MYSQL_TYPE_FLOAT, charsetBinary, 12, 31
		f.Flag |= mysql.NUM_FLAG
	case "double", "real":
		f.Type, f.Charset, f.ColumnLength, f.Decimal = mysql.MYSQL_TYPE_DOUBLE, charsetBinary, 22, 31
		f.Flag |= mysql.NUM_FLAG
	case "bit":
		binaryType(mysql.MYSQL_TYPE_BIT, c.Length)
		f.Flag |= mysql.UNSIGNED_FLAG
	case "date":
		binaryType(mysql.MYSQL_TYPE_DATE, 10)
	case "datetime", "timestamp":
		t := uint8(mysql.MYSQL_TYPE_DATETIME)
		if c.Type == "timestamp" {
			t = mysql.MYSQL_TYPE_TIMESTAMP
		}
		binaryType(t, 19+fracLength(c.FSP))
		f.Decimal = uint8(c.FSP)
		if c.Type == "timestamp" {
			f.Flag |= mysql.UNSIGNED_FLAG // as MariaDB flags a TIMESTAMP
		}
	case "time":
		binaryType(mysql.MYSQL_TYPE_TIME, 10+fracLength(c.FSP))
		f.Decimal = uint8(c.FSP)
	case "char":
		text(mysql.MYSQL_TYPE_STRING, c.Length)
	case "varchar":
		text(mysql.MYSQL_TYPE_VAR_STRING, c.Length)
	case "binary":
		binaryType(mysql.MYSQL_TYPE_STRING, c.Length)
	case "varbinary":
		binaryType(mysql.MYSQL_TYPE_VAR_STRING, c.Length)
	case "tinytext", "text", "mediumtext", "longtext", "json":
		text(mysql.MYSQL_TYPE_BLOB, blobLength(c.Type))
		f.Flag |= mysql.BLOB_FLAG
	case "tinyblob", "blob", "mediumblob", "longblob":
		binaryType(mysql.MYSQL_TYPE_BLOB, blobLength(c.Type))
		f.Flag |= mysql.BLOB_FLAG
	case "enum", "set":
		longest := 0
		for _, e := range c.Elems {
			longest = max(longest, len(e))
		}
		if c.Type == "set" {
			longest = 0
			for _, e := range c.Elems {
				longest += len(e) + 1
			}
		}
		text(mysql.MYSQL_TYPE_STRING, longest)
		f.Flag |= mysql.SET_FLAG
		if c.Type == "enum" {
			f.Flag ^= mysql.SET_FLAG | mysql.ENUM_FLAG
		}
	case "uuid", "inet6", "inet4":
		// MariaDB sends these as latin1 text (converted to the session's
		// character set), flagged UNSIGNED.
		text(mysql.MYSQL_TYPE_STRING, map[string]int{"uuid": 36, "inet6": 39, "inet4": 15}[c.Type])
		f.Charset, f.ColumnLength = charsetDefaults["latin1"], f.ColumnLength/4
		f.Flag |= mysql.UNSIGNED_FLAG
	default: // geometry and its kinds
		binaryType(mysql.MYSQL_TYPE_GEOMETRY, 1<<32-1)
		f.Flag |= mysql.BLOB_FLAG
	}
	if !c.Nullable {
		f.Flag |= mysql.NOT_NULL_FLAG
	}
	if src.pk {
		f.Flag |= mysql.PRI_KEY_FLAG
	} else if k := keyOf(src.def, c.Name); k == "UNI" {
		f.Flag |= mysql.UNIQUE_KEY_FLAG
	} else if k == "MUL" {
		f.Flag |= multipleKeyFlag
	}
	return f
}

// integer sets f to an integer type of display width width (one less
// unsigned).
func integer(f *mysql.Field, c *schema.Column, t uint8, width int) {
	f.Type, f.Charset, f.ColumnLength = t, charsetBinary, uint32(width)
	f.Flag |= mysql.NUM_FLAG
	if c.Unsigned {
		f.Flag |= mysql.UNSIGNED_FLAG
		if t != mysql.MYSQL_TYPE_LONGLONG {
			f.ColumnLength--
		}
	}
}

// fracLength is the characters fsp fraction digits add to a temporal's
// text: the point and the digits.
func fracLength(fsp int) int {
	if fsp > 0 {
		return fsp + 1
	}
	return 0
}

// blobLength is the byte length of a TEXT or BLOB type.
func blobLength(typ string) int {
	switch typ {
	case "tinytext", "tinyblob":
		return 255
	case "text", "blob":
		return 65535
	case "mediumtext", "mediumblob":
		return 1<<24 - 1
	}
	return 1<<32 - 1
}

// capLength is n as a column length, at most the largest.
func capLength(n int) uint32 {
	if n > 1<<32-1 {
		return 1<<32 - 1
	}
	return uint32(n)
}

// keyOf is SHOW COLUMNS' Key of column name of t: PRI (the primary key),
// UNI (the first column of a unique index), MUL (the first column of
// another index), or "".
func keyOf(t *schema.Table, name string) string {
	if t == nil {
		return ""
	}
	key := ""
	for _, ix := range t.Indexes {
		if len(ix.Columns) == 0 || !equalFold(ix.Columns[0], name) {
			if ix.Primary && containsFold(ix.Columns, name) {
				return "PRI"
			}
			continue
		}
		switch {
		case ix.Primary:
			return "PRI"
		case ix.Unique && len(ix.Columns) == 1 && key == "":
			key = "UNI"
		case key == "":
			key = "MUL"
		}
	}
	if key == "" && t.KeyKind == schema.KeyPrimary && containsFold(t.Key, name) {
		return "PRI"
	}
	return key
}

func equalFold(a, b string) bool { return containsFold([]string{a}, b) }

// multipleKeyFlag marks a column that starts a non-unique index
// (MULTIPLE_KEY_FLAG, which go-mysql does not name).
const multipleKeyFlag = 8
