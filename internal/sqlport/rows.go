package sqlport

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/views"
)

// column is how one result column goes on the wire: its field and, for a
// column that shows a table column, that the stored definition formats
// its text (direct).
type column struct {
	field  *mysql.Field
	dbType string // DuckDB's type of the column
	direct bool
	latin1 bool // its text is sent in latin1 (wire)
	// loc is the session's time zone for a column showing a TIMESTAMP
	// column (its values are UTC), nil for every other.
	loc *time.Location
}

// clock is a DATETIME/TIMESTAMP/DATE value as sent: a TIMESTAMP column's
// in the session's time zone, any other as it is (UTC).
func (c column) clock(t time.Time) time.Time {
	if c.loc != nil {
		return t.In(c.loc)
	}
	return t.UTC()
}

// answer reads rows (of stmt, run on s) into a resultset: the fields of
// columns that show a table column carry its stored type
// (fieldOfColumn), the others their DuckDB type (fieldOf); the rows are
// in the text protocol, or the binary one (a prepared statement's). More
// than h.cfg.MaxRows rows is an error naming the bound.
func (h *handler) answer(ctx context.Context, s *views.Session, stmt string, rows *sql.Rows, binaryRows bool) (*mysql.Resultset, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	cols, err := h.columns(ctx, s, stmt, cts)
	if err != nil {
		return nil, err
	}
	rs := mysql.NewResultset(len(cts))
	for i := range cols {
		rs.Fields[i] = cols[i].field
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if len(rs.RowDatas) == h.cfg.MaxRows {
			return nil, fmt.Errorf("the answer has more than %d rows, the port's bound: ask for fewer (LIMIT)", h.cfg.MaxRows)
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var row []byte
		if binaryRows {
			if row, err = binaryRow(cols, vals); err != nil {
				return nil, err
			}
		} else {
			row = textRow(cols, vals)
		}
		rs.RowDatas = append(rs.RowDatas, row)
	}
	return rs, rows.Err()
}

// columns are how the result columns cts of stmt (run on s) go on the
// wire: the fields of columns that show a table column carry its stored
// type (fieldOfColumn), the others their DuckDB type (fieldOf); each
// with the session's character set number (wire).
func (h *handler) columns(ctx context.Context, s *views.Session, stmt string, cts []*sql.ColumnType) ([]column, error) {
	srcs, err := h.sourceColumns(ctx, s, stmt, cts)
	if err != nil {
		return nil, err
	}
	cols := make([]column, len(cts))
	for i, ct := range cts {
		cols[i] = column{field: fieldOf(ct), dbType: ct.DatabaseTypeName()}
		if srcs[i] != nil {
			cols[i].field, cols[i].direct = fieldOfColumn(ct.Name(), srcs[i]), true
		}
		cols[i].latin1 = wire(cols[i].field, h.results)
		if cols[i].direct && cols[i].field.Type == mysql.MYSQL_TYPE_TIMESTAMP {
			cols[i].loc = h.location()
		}
	}
	return cols, nil
}

// textRow is one row in the text protocol.
func textRow(cols []column, vals []any) []byte {
	var row []byte
	for i, v := range vals {
		if v == nil {
			row = append(row, 0xfb)
			continue
		}
		row = append(row, mysql.PutLengthEncodedString(cols[i].text(v))...)
	}
	return row
}

// binaryRow is one row in the binary protocol: the header, the NULL
// bitmap (offset 2) and each value not NULL in its type's form.
func binaryRow(cols []column, vals []any) ([]byte, error) {
	row := make([]byte, 1+(len(vals)+7+2)/8)
	for i, v := range vals {
		if v == nil {
			row[1+(i+2)/8] |= 1 << ((i + 2) % 8)
			continue
		}
		b, err := cols[i].binary(v)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", cols[i].field.Name, err)
		}
		row = append(row, b...)
	}
	return row, nil
}

// text is v as the text protocol writes it (textValue), in latin1 for a
// column sent so.
func (c column) text(v any) []byte {
	b := c.textValue(v)
	if c.latin1 {
		return toLatin1(b)
	}
	return b
}

// textValue is v's text: for a column that shows a table column, as the
// source server writes the stored type (a FLOAT's 6 significant digits, a
// YEAR's 4 digits, a temporal's fraction of exactly its precision).
func (c column) textValue(v any) []byte {
	if st, ok := c.stored(v); ok {
		return []byte(storedText(st, c.field))
	}
	if c.direct {
		switch c.field.Type {
		case mysql.MYSQL_TYPE_FLOAT:
			if f, ok := v.(float32); ok {
				return []byte(strconv.FormatFloat(float64(f), 'g', 6, 32))
			}
		case mysql.MYSQL_TYPE_YEAR:
			if n, ok := integerOf(v); ok {
				return []byte(fmt.Sprintf("%04d", n))
			}
		case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
			if t, ok := v.(time.Time); ok {
				return []byte(c.clock(t).Format("2006-01-02 15:04:05") + fraction(int64(t.Nanosecond()/1000), c.field.Decimal))
			}
		case mysql.MYSQL_TYPE_TIME:
			if iv, ok := v.(duckdb.Interval); ok {
				neg, h, m, s, us := clock(iv)
				sign := ""
				if neg {
					sign = "-"
				}
				return []byte(fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s) + fraction(us, c.field.Decimal))
			}
		}
	}
	return []byte(textOf(v, c.dbType))
}

// stored is v's stored parts when v is the stand-in of an exact typed
// view (views.StoredTemporal: a zero or impossible date or time) in a
// DATE, DATETIME or TIMESTAMP column.
func (c column) stored(v any) (views.Stored, bool) {
	t, ok := v.(time.Time)
	if !ok {
		return views.Stored{}, false
	}
	switch c.field.Type {
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
		return views.StoredTemporal(t)
	}
	return views.Stored{}, false
}

// storedText is the stored parts t as MySQL writes a value of field f:
// the date, and for DATETIME/TIMESTAMP the time with f's fraction digits.
func storedText(t views.Stored, f *mysql.Field) string {
	out := fmt.Sprintf("%04d-%02d-%02d", t.Year, t.Month, t.Day)
	if f.Type == mysql.MYSQL_TYPE_DATE {
		return out
	}
	return out + fmt.Sprintf(" %02d:%02d:%02d", t.Hour, t.Minute, t.Second) + fraction(int64(t.Micro), f.Decimal)
}

// fraction is ".ffffff" cut to digits digits, or "" for none.
func fraction(us int64, digits uint8) string {
	if digits == 0 || digits > 6 {
		return ""
	}
	return fmt.Sprintf(".%06d", us)[:1+digits]
}

// clock splits a TIME (a DuckDB INTERVAL) into its sign, hours, minutes,
// seconds and microseconds.
func clock(iv duckdb.Interval) (neg bool, h, m, s, us int64) {
	total := iv.Micros + int64(iv.Days)*24*3600*1e6 + int64(iv.Months)*30*24*3600*1e6
	if total < 0 {
		neg, total = true, -total
	}
	return neg, total / 3600e6, total / 60e6 % 60, total / 1e6 % 60, total % 1e6
}

// binary is v in the binary protocol's form of the column's type.
func (c column) binary(v any) ([]byte, error) {
	switch c.field.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR,
		mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		n, ok := integerOf(v)
		if !ok {
			return nil, fmt.Errorf("integer column holds %T", v)
		}
		b := binary.LittleEndian.AppendUint64(nil, n)
		return b[:intWidth(c.field.Type)], nil
	case mysql.MYSQL_TYPE_FLOAT:
		f, ok := floatOf(v)
		if !ok {
			return nil, fmt.Errorf("float column holds %T", v)
		}
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
	case mysql.MYSQL_TYPE_DOUBLE:
		f, ok := floatOf(v)
		if !ok {
			return nil, fmt.Errorf("double column holds %T", v)
		}
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
		if st, ok := c.stored(v); ok {
			return binaryStored(st, c.field.Type == mysql.MYSQL_TYPE_DATE), nil
		}
		if t, ok := v.(time.Time); ok {
			return binaryDateTime(c.clock(t), c.field.Type == mysql.MYSQL_TYPE_DATE), nil
		}
	case mysql.MYSQL_TYPE_TIME:
		if iv, ok := v.(duckdb.Interval); ok {
			return binaryTime(iv), nil
		}
	}
	return mysql.PutLengthEncodedString(c.text(v)), nil
}

// intWidth is the bytes of an integer type in the binary protocol.
func intWidth(t uint8) int {
	switch t {
	case mysql.MYSQL_TYPE_TINY:
		return 1
	case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
		return 2
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG:
		return 4
	}
	return 8
}

// integerOf is an integer value's two's-complement bits.
func integerOf(v any) (uint64, bool) {
	switch x := v.(type) {
	case int8:
		return uint64(x), true
	case int16:
		return uint64(x), true
	case int32:
		return uint64(x), true
	case int64:
		return uint64(x), true
	case int:
		return uint64(x), true
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case uint:
		return uint64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case *big.Int:
		if x.IsInt64() {
			return uint64(x.Int64()), true
		}
		if x.IsUint64() {
			return x.Uint64(), true
		}
	}
	return 0, false
}

// floatOf is a float value as a float64.
func floatOf(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// binaryDateTime is a DATE or DATETIME in the binary protocol
// (binaryStored).
func binaryDateTime(t time.Time, dateOnly bool) []byte {
	return binaryStored(views.Stored{Year: t.Year(), Month: int(t.Month()), Day: t.Day(), Hour: t.Hour(), Minute: t.Minute(),
		Second: t.Second(), Micro: t.Nanosecond() / 1000}, dateOnly)
}

// binaryStored is a DATE or DATETIME of parts t (zero parts kept) in the
// binary protocol: its length, then the date, the time when not
// midnight, the microseconds when not 0.
func binaryStored(t views.Stored, dateOnly bool) []byte {
	b := []byte{4}
	b = binary.LittleEndian.AppendUint16(b, uint16(t.Year))
	b = append(b, byte(t.Month), byte(t.Day))
	us := t.Micro
	if dateOnly || t.Hour == 0 && t.Minute == 0 && t.Second == 0 && us == 0 {
		return b
	}
	b = append(b, byte(t.Hour), byte(t.Minute), byte(t.Second))
	b[0] = 7
	if us != 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(us))
		b[0] = 11
	}
	return b
}

// binaryTime is a TIME in the binary protocol: its length, the sign, the
// days, hours, minutes, seconds and the microseconds when not 0; zero is
// length 0.
func binaryTime(iv duckdb.Interval) []byte {
	neg, h, m, s, us := clock(iv)
	if h == 0 && m == 0 && s == 0 && us == 0 {
		return []byte{0}
	}
	b := []byte{8, 0}
	if neg {
		b[1] = 1
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(h/24))
	b = append(b, byte(h%24), byte(m), byte(s))
	if us != 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(us))
		b[0] = 12
	}
	return b
}

// binaryResult turns a text-protocol resultset the port built itself
// (SHOW, variables: every value a string or an integer) into the binary
// protocol, for a prepared statement's answer.
func binaryResult(rs *mysql.Resultset) error {
	for r, data := range rs.RowDatas {
		out := make([]byte, 1+(len(rs.Fields)+7+2)/8)
		pos := 0
		for i, f := range rs.Fields {
			v, isNull, n, err := mysql.LengthEncodedString(data[pos:])
			if err != nil {
				return fmt.Errorf("row %d column %s: %w", r, f.Name, err)
			}
			pos += n
			if isNull {
				out[1+(i+2)/8] |= 1 << ((i + 2) % 8)
				continue
			}
			switch f.Type {
			case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR,
				mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
				n, err := parseInteger(string(v), f.Flag&mysql.UNSIGNED_FLAG != 0)
				if err != nil {
					return fmt.Errorf("row %d column %s: %w", r, f.Name, err)
				}
				out = append(out, binary.LittleEndian.AppendUint64(nil, n)[:intWidth(f.Type)]...)
			case mysql.MYSQL_TYPE_DOUBLE:
				x, err := strconv.ParseFloat(string(v), 64)
				if err != nil {
					return fmt.Errorf("row %d column %s: %w", r, f.Name, err)
				}
				out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
			default:
				if t := f.Type; t == mysql.MYSQL_TYPE_FLOAT || t == mysql.MYSQL_TYPE_DATE || t == mysql.MYSQL_TYPE_DATETIME ||
					t == mysql.MYSQL_TYPE_TIMESTAMP || t == mysql.MYSQL_TYPE_TIME {
					return fmt.Errorf("row %d column %s: type %d has no binary form from text here", r, f.Name, t)
				}
				out = append(out, mysql.PutLengthEncodedString(v)...)
			}
		}
		rs.RowDatas[r] = out
	}
	return nil
}

// parseInteger parses a signed or unsigned integer's text into its bits.
func parseInteger(s string, unsigned bool) (uint64, error) {
	s = strings.TrimSpace(s)
	if unsigned {
		return strconv.ParseUint(s, 10, 64)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return uint64(n), err
}
