package views

import (
	"fmt"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// MaxDecimalPrecision is the largest precision of DuckDB's DECIMAL.
const MaxDecimalPrecision = 38

// Typed views. Table files keep DECIMAL, DATE, DATETIME, TIMESTAMP and TIME
// as their lossless MySQL text (internal/rowimage); a typed view presents them
// in DuckDB types so that comparisons, date arithmetic and exact sums work:
//
//	DECIMAL(p,s), p <= 38   DECIMAL(p,s)   every value
//	DECIMAL(p,s), p > 38    DECIMAL(38,s)  a value with more than 38-s integer
//	                                       digits reads as NULL
//	DATE                    DATE           a date with a zero month or day
//	                                       (0000-00-00, 2026-02-00) or that
//	                                       does not exist (2026-02-30) reads
//	                                       as NULL
//	DATETIME, TIMESTAMP     TIMESTAMP      likewise; TIMESTAMP values are UTC,
//	                                       DATETIME values as the source
//	                                       stored them
//	TIME                    INTERVAL       every value: MySQL's range
//	                                       -838:59:59.999999..838:59:59.999999
//	                                       fits, negative values included
//
// Every other column is presented as stored. The conversion is TRY_CAST of
// the stored text: the text has exactly the column's scale or fraction
// digits, so a value that converts converts exactly, and a value the DuckDB
// type cannot hold reads as NULL, never as an error. This NULL is the one
// place dbtrail shows a value it does not hold exactly; the raw views
// (Options.Raw, `dbtrail views --raw`, `dbtrail query --raw`) show the text,
// and the exact forms (Options.Exact, below: the SQL port's) keep it.

// typedList returns the select list of t's typed view: each column in the
// order of t.Columns, converted where typedType says so and named as the
// column; exact (Options.Exact) gives the exact forms (exactExpr).
func typedList(t TableRef, exact bool) string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		q := quoteIdent(c)
		out[i] = q
		if t.Defs == nil {
			continue
		}
		typ := typedType(&t.Defs[i])
		switch {
		case typ == "":
		case exact:
			out[i] = exactExpr(&t.Defs[i], q, typ) + " AS " + q
		default:
			out[i] = fmt.Sprintf("TRY_CAST(%s AS %s) AS %s", q, typ, q)
		}
	}
	return strings.Join(out, ", ")
}

// typedType returns the DuckDB type a typed view presents column c in, or ""
// when c is presented as stored.
func typedType(c *schema.Column) string {
	switch class, _ := rowimage.ClassOf(c); class {
	case rowimage.ClassDecimal:
		if c.Precision < 1 || c.Scale < 0 || c.Scale > c.Precision || c.Scale > MaxDecimalPrecision {
			return "" // not a definition MySQL writes: keep the text
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", min(c.Precision, MaxDecimalPrecision), c.Scale)
	case rowimage.ClassTemporal:
		switch c.Type {
		case "date":
			return "DATE"
		case "datetime", "timestamp":
			return "TIMESTAMP"
		case "time":
			return "INTERVAL"
		}
	}
	return ""
}

// Exact forms (Options.Exact, the SQL port's views). A value the typed
// view would read as NULL is kept exactly:
//
//	DECIMAL(p,s), p > 38    its stored text (VARCHAR): the column is
//	                        text, compared and summed as text
//	DATE                    a date with a zero or impossible part is a
//	                        stand-in DATE far before year 0: the epoch
//	                        plus exactBase days plus the code of its
//	                        parts, (year*13 + month)*32 + day
//	DATETIME, TIMESTAMP     likewise a stand-in TIMESTAMP: that day plus
//	                        the time of day as stored
//
// Stand-ins sort before every real date (the zero date first, as MySQL
// sorts it) and among themselves by their parts; StoredTemporal reads
// their parts back. A stored text that is not a MySQL date is NULL.

// exactBase is the day (since 1970-01-01) of the stand-in of 0000-00-00:
// about 191,700 years before year 0, so that a stand-in TIMESTAMP's
// microseconds still fit DuckDB's TIMESTAMP.
const exactBase = -70_000_000

// exactYears are the years below which a DATE or TIMESTAMP is a stand-in:
// the stand-ins span exactBase to exactBase + 4,160,000 days (years
// -189,700 to -178,300); real dates are MySQL's, from year 0.
const exactYears = -100_000

// StandInSQL is the DuckDB condition that e, a DATE or TIMESTAMP of an
// exact typed view, is a stand-in (a stored date with a zero or impossible
// part).
func StandInSQL(e string) string {
	return fmt.Sprintf("year(%s) < %d", e, exactYears)
}

// MisorderedSQL is the DuckDB condition that e, a DATE or TIMESTAMP of an
// exact typed view, is a stand-in of other than the zero date
// (0000-00-00, at any time of day): it sorts before every real date, where
// MySQL sorts it among them by its parts ('2024-02-30' after 2024-02-29).
func MisorderedSQL(e string) string {
	return fmt.Sprintf("(%s AND CAST(%s AS DATE) <> CAST(DATE '1970-01-01' + %d AS DATE))", StandInSQL(e), e, exactBase)
}

// exactExpr is the exact form of the column q (definition c) whose typed
// type is typ.
func exactExpr(c *schema.Column, q, typ string) string {
	part := func(from, n int) string {
		return fmt.Sprintf("TRY_CAST(substr(%s, %d, %d) AS BIGINT)", q, from, n)
	}
	day := fmt.Sprintf("(%d + (%s * 13 + %s) * 32 + %s)", exactBase, part(1, 4), part(6, 2), part(9, 2))
	switch typ {
	case "DATE":
		return fmt.Sprintf("coalesce(TRY_CAST(%s AS DATE), CAST(DATE '1970-01-01' + CAST(%s AS INTEGER) AS DATE))", q, day)
	case "TIMESTAMP":
		clock := fmt.Sprintf("epoch_us(TRY_CAST('1970-01-01 ' || substr(%s, 12) AS TIMESTAMP))", q)
		return fmt.Sprintf("coalesce(TRY_CAST(%s AS TIMESTAMP), make_timestamp(%s * 86400000000 + %s))", q, day, clock)
	}
	if c.Precision > MaxDecimalPrecision {
		return q // a DECIMAL beyond DuckDB's: its text
	}
	return fmt.Sprintf("TRY_CAST(%s AS %s)", q, typ)
}

// Stored is a date and time as the source stored it, zero parts kept.
type Stored struct {
	Year, Month, Day, Hour, Minute, Second, Micro int
}

// StoredTemporal reads a DATE or TIMESTAMP value of an exact typed view
// (Options.Exact): a stand-in's stored parts and true, or false for a real
// date or time (the value itself is the stored one).
func StoredTemporal(t time.Time) (Stored, bool) {
	t = t.UTC()
	if t.Year() >= exactYears {
		return Stored{}, false
	}
	us := t.Unix()*1_000_000 + int64(t.Nanosecond()/1000) // within ±292,000 years: no overflow
	days := us / 86_400_000_000
	if us%86_400_000_000 < 0 {
		days--
	}
	clock := us - days*86_400_000_000
	code := int(days - exactBase)
	return Stored{Year: code / (13 * 32), Month: code / 32 % 13, Day: code % 32,
		Hour: int(clock / 3_600_000_000), Minute: int(clock / 60_000_000 % 60), Second: int(clock / 1_000_000 % 60),
		Micro: int(clock % 1_000_000)}, true
}
