package views

import (
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/types"
)

// MaxDecimalPrecision is the largest precision of DuckDB's DECIMAL.
const MaxDecimalPrecision = 38

// Typed views. Table files keep DECIMAL, DATE, DATETIME, TIMESTAMP and TIME
// as their lossless MySQL text (internal/types); a typed view presents them
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
// (Options.Raw, `dbtrail views --raw`, `dbtrail query --raw`) show the text.

// typedList returns the select list of t's typed view: each column in the
// order of t.Columns, converted where typedType says so and named as the
// column.
func typedList(t TableRef) string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		q := quoteIdent(c)
		out[i] = q
		if t.Defs == nil {
			continue
		}
		if typ := typedType(&t.Defs[i]); typ != "" {
			out[i] = fmt.Sprintf("TRY_CAST(%s AS %s) AS %s", q, typ, q)
		}
	}
	return strings.Join(out, ", ")
}

// typedType returns the DuckDB type a typed view presents column c in, or ""
// when c is presented as stored.
func typedType(c *schema.Column) string {
	switch class, _ := types.ClassOf(c); class {
	case types.ClassDecimal:
		if c.Precision < 1 || c.Scale < 0 || c.Scale > c.Precision || c.Scale > MaxDecimalPrecision {
			return "" // not a definition MySQL writes: keep the text
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", min(c.Precision, MaxDecimalPrecision), c.Scale)
	case types.ClassTemporal:
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
