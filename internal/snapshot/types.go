package snapshot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// MetaMySQLType is the Arrow field metadata key (kept in the Parquet file
// through the stored Arrow schema) holding the column's MySQL type, e.g.
// "bigint unsigned", "decimal(65,30)", "enum('a','b')".
const MetaMySQLType = "dbtrail.mysql_type"

// ArrowSchema returns the Arrow schema of a table file: one field per column,
// in table order, named as the column, always nullable, with the column's
// MySQL type in the field metadata under MetaMySQLType. This is the one type
// mapping of docs/types.md for snapshot files:
//
//	tinyint            INT8    (unsigned: UINT8)
//	smallint           INT16   (unsigned: UINT16)
//	mediumint, int     INT32   (unsigned: UINT32)
//	bigint             INT64   (unsigned: UINT64)
//	year               INT16
//	decimal            STRING  exact text with exactly Scale fraction digits
//	float, double      FLOAT32, FLOAT64
//	date, datetime,    STRING  MySQL's text with exactly FSP fraction digits,
//	timestamp, time            zero dates kept, TIMESTAMP in UTC
//	char..longtext,    STRING  UTF-8 text; ENUM/SET as labels; JSON as the
//	enum, set, json            document text
//	binary..longblob,  BINARY  raw bytes; BINARY(n) padded with 0x00 to n
//	bit, geometry,             bytes, BIT(n) as ceil(n/8) big-endian bytes;
//	charset binary             character types with charset binary too
//	uuid, inet6, inet4 STRING  MariaDB's text form
//
// The classification is rowimage.ClassOf, the one the canonical form uses. An
// unsupported column type is an error naming table and column.
func ArrowSchema(t *schema.Table) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		dt, err := arrowType(c)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t.QualifiedName(), err)
		}
		fields[i] = arrow.Field{
			Name:     c.Name,
			Type:     dt,
			Nullable: true,
			Metadata: arrow.NewMetadata([]string{MetaMySQLType}, []string{MySQLType(c)}),
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// arrowType maps one column; see ArrowSchema.
func arrowType(c *schema.Column) (arrow.DataType, error) {
	class, bits := rowimage.ClassOf(c)
	switch class {
	case rowimage.ClassInteger:
		return intType(bits, c.Unsigned)
	case rowimage.ClassYear:
		return arrow.PrimitiveTypes.Int16, nil
	case rowimage.ClassFloat:
		return arrow.PrimitiveTypes.Float32, nil
	case rowimage.ClassDouble:
		return arrow.PrimitiveTypes.Float64, nil
	case rowimage.ClassDecimal, rowimage.ClassTemporal, rowimage.ClassText, rowimage.ClassAddress:
		return arrow.BinaryTypes.String, nil
	case rowimage.ClassBinary:
		return arrow.BinaryTypes.Binary, nil
	}
	return nil, fmt.Errorf("column %s: unsupported column type %q", c.Name, c.Type)
}

func intType(bits uint, unsigned bool) (arrow.DataType, error) {
	switch {
	case bits == 8 && unsigned:
		return arrow.PrimitiveTypes.Uint8, nil
	case bits == 8:
		return arrow.PrimitiveTypes.Int8, nil
	case bits == 16 && unsigned:
		return arrow.PrimitiveTypes.Uint16, nil
	case bits == 16:
		return arrow.PrimitiveTypes.Int16, nil
	case (bits == 24 || bits == 32) && unsigned:
		return arrow.PrimitiveTypes.Uint32, nil
	case bits == 24 || bits == 32:
		return arrow.PrimitiveTypes.Int32, nil
	case bits == 64 && unsigned:
		return arrow.PrimitiveTypes.Uint64, nil
	case bits == 64:
		return arrow.PrimitiveTypes.Int64, nil
	}
	return nil, fmt.Errorf("integer width %d", bits)
}

// MySQLType renders the column's type as information_schema COLUMN_TYPE
// spells it (without integer display widths): "int unsigned",
// "decimal(10,2)", "varchar(255)", "datetime(6)", "enum('a','b')".
func MySQLType(c *schema.Column) string {
	var b strings.Builder
	b.WriteString(c.Type)
	switch class, _ := rowimage.ClassOf(c); {
	case c.Type == "enum" || c.Type == "set":
		b.WriteByte('(')
		for i, e := range c.Elems {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("'" + strings.ReplaceAll(e, "'", "''") + "'")
		}
		b.WriteByte(')')
	case class == rowimage.ClassDecimal:
		fmt.Fprintf(&b, "(%d,%d)", c.Precision, c.Scale)
	case class == rowimage.ClassTemporal && c.FSP > 0 && c.Type != "date":
		b.WriteString("(" + strconv.Itoa(c.FSP) + ")")
	case c.Length > 0 && (c.Type == "char" || c.Type == "varchar" || c.Type == "binary" ||
		c.Type == "varbinary" || c.Type == "bit"):
		b.WriteString("(" + strconv.Itoa(c.Length) + ")")
	}
	if c.Unsigned {
		b.WriteString(" unsigned")
	}
	return b.String()
}
