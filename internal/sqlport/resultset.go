package sqlport

import (
	"database/sql"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// Charsets of the fields: utf8mb4 text, binary.
const (
	charsetUTF8MB4 = 45
	charsetBinary  = 63
)

// fieldOf is the MySQL field of a DuckDB column.
func fieldOf(ct *sql.ColumnType) *mysql.Field {
	f := &mysql.Field{Name: []byte(ct.Name()), OrgName: []byte(ct.Name()), Charset: charsetBinary, Type: mysql.MYSQL_TYPE_VAR_STRING}
	db := ct.DatabaseTypeName()
	unsigned := func(t uint8) { f.Type, f.Flag = t, mysql.UNSIGNED_FLAG|mysql.BINARY_FLAG }
	signed := func(t uint8) { f.Type, f.Flag = t, mysql.BINARY_FLAG }
	switch {
	case db == "TINYINT":
		signed(mysql.MYSQL_TYPE_TINY)
	case db == "UTINYINT":
		unsigned(mysql.MYSQL_TYPE_TINY)
	case db == "SMALLINT":
		signed(mysql.MYSQL_TYPE_SHORT)
	case db == "USMALLINT":
		unsigned(mysql.MYSQL_TYPE_SHORT)
	case db == "INTEGER":
		signed(mysql.MYSQL_TYPE_LONG)
	case db == "UINTEGER":
		unsigned(mysql.MYSQL_TYPE_LONG)
	case db == "BIGINT":
		signed(mysql.MYSQL_TYPE_LONGLONG)
	case db == "UBIGINT":
		unsigned(mysql.MYSQL_TYPE_LONGLONG)
	case db == "HUGEINT", db == "UHUGEINT":
		f.Type = mysql.MYSQL_TYPE_NEWDECIMAL
	case db == "BOOLEAN":
		signed(mysql.MYSQL_TYPE_TINY)
	case db == "FLOAT":
		signed(mysql.MYSQL_TYPE_FLOAT)
		f.Decimal = 31
	case db == "DOUBLE":
		signed(mysql.MYSQL_TYPE_DOUBLE)
		f.Decimal = 31
	case strings.HasPrefix(db, "DECIMAL"):
		f.Type = mysql.MYSQL_TYPE_NEWDECIMAL
		if _, scale, ok := ct.DecimalSize(); ok {
			f.Decimal = uint8(scale)
		}
	case db == "DATE":
		f.Type = mysql.MYSQL_TYPE_DATE
	case strings.HasPrefix(db, "TIMESTAMP"):
		f.Type, f.Decimal = mysql.MYSQL_TYPE_DATETIME, 6
	case db == "INTERVAL", db == "TIME":
		f.Type, f.Decimal = mysql.MYSQL_TYPE_TIME, 6
	case db == "BLOB":
		f.Type, f.Flag = mysql.MYSQL_TYPE_BLOB, mysql.BINARY_FLAG|mysql.BLOB_FLAG
	case db == "VARCHAR":
		f.Charset = charsetUTF8MB4
	case db == "\"NULL\"", db == "NULL":
		f.Type = mysql.MYSQL_TYPE_NULL
	default: // lists, structs, maps, JSON: their text
		f.Charset = charsetUTF8MB4
	}
	f.ColumnLength = 1 << 24
	return f
}

// mysqlTypeName names a DuckDB column type as SHOW COLUMNS shows it.
func mysqlTypeName(db string) string {
	switch db {
	case "TINYINT":
		return "tinyint"
	case "UTINYINT":
		return "tinyint unsigned"
	case "SMALLINT":
		return "smallint"
	case "USMALLINT":
		return "smallint unsigned"
	case "INTEGER":
		return "int"
	case "UINTEGER":
		return "int unsigned"
	case "BIGINT":
		return "bigint"
	case "UBIGINT":
		return "bigint unsigned"
	case "BOOLEAN":
		return "tinyint(1)"
	case "FLOAT":
		return "float"
	case "DOUBLE":
		return "double"
	case "DATE":
		return "date"
	case "INTERVAL":
		return "time(6)"
	case "BLOB":
		return "longblob"
	case "VARCHAR":
		return "longtext"
	}
	switch {
	case strings.HasPrefix(db, "DECIMAL"):
		return strings.ToLower(db)
	case strings.HasPrefix(db, "TIMESTAMP"):
		return "datetime(6)"
	}
	return strings.ToLower(db)
}

// textOf is v as MySQL's text protocol writes it.
func textOf(v any, dbType string) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return fmt.Sprint(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case *big.Int:
		return x.String()
	case duckdb.Decimal:
		return decimalText(x)
	case time.Time:
		if dbType == "DATE" {
			return x.UTC().Format("2006-01-02")
		}
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	case duckdb.Interval:
		return intervalText(x)
	}
	return fmt.Sprint(v)
}

// decimalText is d with exactly its scale's digits after the point, as
// MySQL writes a DECIMAL.
func decimalText(d duckdb.Decimal) string {
	neg := d.Value.Sign() < 0
	digits := new(big.Int).Abs(d.Value).String()
	scale := int(d.Scale)
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// intervalText is a TIME (a DuckDB INTERVAL of days and micros) as MySQL
// writes it: [-]H:MM:SS[.ffffff].
func intervalText(iv duckdb.Interval) string {
	us := iv.Micros + int64(iv.Days)*24*3600*1e6 + int64(iv.Months)*30*24*3600*1e6
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	h, m, s, frac := us/3600e6, us/60e6%60, us/1e6%60, us%1e6
	out := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
	if frac != 0 {
		out += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
	}
	return out
}
