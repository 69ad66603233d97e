package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Ranks of the types whose wider members hold every value of the narrower
// ones unchanged (in the text form a table file stores).
var (
	intRanks  = []string{"tinyint", "smallint", "mediumint", "int", "bigint"}
	textRanks = []string{"tinytext", "text", "mediumtext", "longtext"}
	blobRanks = []string{"tinyblob", "blob", "mediumblob", "longblob"}
)

// keepsValues returns "" when every value column o can hold is stored
// unchanged by the server in column n (the same type, or a widening), else
// why not. Widenings: a wider integer of the same signedness, or a strictly
// wider signed one for an unsigned one; DECIMAL with at least as many
// integer and fraction digits (not to UNSIGNED); CHAR, VARCHAR, BINARY,
// VARBINARY, BIT longer; TEXT and BLOB larger, VARCHAR to a TEXT and
// VARBINARY to a BLOB that hold its longest value; DATETIME, TIMESTAMP,
// TIME with more fraction digits; ENUM and SET with labels appended.
// Character columns keep their charset. NULL → NOT NULL is refused: the
// server changes NULLs to the type's default (or refuses, by sql_mode).
func keepsValues(o, n Column) string {
	if o.Nullable && !n.Nullable {
		return "NULL → NOT NULL would change existing NULLs (or fail), depending on sql_mode"
	}
	if o.Charset != "" && n.Charset != "" && NormalizeCharset(o.Charset) != NormalizeCharset(n.Charset) {
		return fmt.Sprintf("character set %s → %s converts values", o.Charset, n.Charset)
	}
	if NormalizeCharset(o.Charset) == NormalizeCharset(n.Charset) && widens(o, n) {
		return ""
	}
	if o.Type == "char" && n.Type != "char" {
		return fmt.Sprintf("type %s → %s keeps or pads CHAR's trailing spaces by sql_mode (PAD_CHAR_TO_FULL_LENGTH)", typeText(o), typeText(n))
	}
	return fmt.Sprintf("type %s → %s converts values", typeText(o), typeText(n))
}

// widens reports whether n is o or a widening of o (see keepsValues), their
// charsets being equal.
func widens(o, n Column) bool {
	if ro, rn := slices.Index(intRanks, o.Type), slices.Index(intRanks, n.Type); ro >= 0 && rn >= 0 {
		return (rn >= ro && o.Unsigned == n.Unsigned) || (rn > ro && o.Unsigned && !n.Unsigned)
	}
	for _, ranks := range [][]string{textRanks, blobRanks} {
		if ro, rn := slices.Index(ranks, o.Type), slices.Index(ranks, n.Type); ro >= 0 && rn >= 0 {
			return rn >= ro
		}
	}
	switch {
	case o.Type == "varchar" && slices.Contains(textRanks, n.Type):
		return int64(o.Length)*int64(max(CharsetMaxLen(o.Charset), 1)) <= blobCapacity(n.Type)
	case o.Type == "varbinary" && slices.Contains(blobRanks, n.Type):
		return int64(o.Length) <= blobCapacity(n.Type)
	}
	if o.Type != n.Type {
		return false
	}
	switch o.Type {
	case "decimal":
		return n.Scale >= o.Scale && n.Precision-n.Scale >= o.Precision-o.Scale && (o.Unsigned || !n.Unsigned)
	case "char", "varchar", "binary", "varbinary", "bit":
		return n.Length >= o.Length
	case "datetime", "timestamp", "time":
		return n.FSP >= o.FSP
	case "enum", "set":
		return len(n.Elems) >= len(o.Elems) && slices.Equal(n.Elems[:len(o.Elems)], o.Elems)
	}
	return o.Unsigned == n.Unsigned && o.Length == n.Length && o.Precision == n.Precision &&
		o.Scale == n.Scale && o.FSP == n.FSP && slices.Equal(o.Elems, n.Elems)
}

// blobCapacity returns the capacity in bytes of a TEXT or BLOB type.
func blobCapacity(tp string) int64 {
	for _, b := range blobTypes {
		if tp == b.text || tp == b.blob {
			return b.capacity
		}
	}
	return 0
}

// sameColumnType reports whether two columns have the same definition, name
// aside.
func sameColumnType(o, n Column) bool {
	o.Name = n.Name
	return o.Type == n.Type && o.Unsigned == n.Unsigned && o.Length == n.Length && o.Precision == n.Precision &&
		o.Scale == n.Scale && o.FSP == n.FSP && slices.Equal(o.Elems, n.Elems) &&
		NormalizeCharset(o.Charset) == NormalizeCharset(n.Charset) && o.Nullable == n.Nullable && o.Generated == n.Generated
}

// typeText spells a column's type for messages: "varchar(10)",
// "decimal(10,2) unsigned", "enum('a','b')".
func typeText(c Column) string {
	var b strings.Builder
	b.WriteString(c.Type)
	switch {
	case c.Type == "enum" || c.Type == "set":
		quoted := make([]string, len(c.Elems))
		for i, e := range c.Elems {
			quoted[i] = "'" + strings.ReplaceAll(e, "'", "''") + "'"
		}
		b.WriteString("(" + strings.Join(quoted, ",") + ")")
	case c.Type == "decimal":
		fmt.Fprintf(&b, "(%d,%d)", c.Precision, c.Scale)
	case c.FSP > 0:
		b.WriteString("(" + strconv.Itoa(c.FSP) + ")")
	case c.Length > 0:
		b.WriteString("(" + strconv.Itoa(c.Length) + ")")
	}
	if c.Unsigned {
		b.WriteString(" unsigned")
	}
	if c.Charset != "" {
		b.WriteString(" " + c.Charset)
	}
	return b.String()
}
