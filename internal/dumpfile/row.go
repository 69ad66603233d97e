package dumpfile

import "fmt"

// ValueKind says which kind of SQL literal a value was written as.
type ValueKind uint8

const (
	// KindNull is the NULL keyword; Raw is nil.
	KindNull ValueKind = iota
	// KindNumber is an unquoted numeric literal ("-12", "3.25", "1e-7");
	// Raw is its exact text, sign included.
	KindNumber
	// KindString is a quoted string ('...' or "...", with or without a
	// charset introducer); Raw holds the bytes after unescaping.
	KindString
	// KindHex is 0xABCD or X'ABCD'; Raw holds the decoded bytes (an odd
	// digit count in 0x form is padded on the left, as MySQL does).
	KindHex
	// KindBit is 0b0101 or b'0101'; Raw holds the value as big-endian bytes,
	// ceil(digits/8) of them.
	KindBit
)

var kindNames = [...]string{"NULL", "number", "string", "hex", "bit"}

func (k ValueKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("ValueKind(%d)", k)
}

// Value is one literal of a row.
type Value struct {
	Null bool
	Kind ValueKind
	// Raw is the literal's content: unescaped bytes for strings, decoded
	// bytes for hex and bit literals, the exact text of a number, nil for
	// NULL. Bytes are kept exactly as written (no charset conversion).
	Raw []byte
	// Charset is the introducer of the literal without its underscore and
	// in lower case ("binary" for _binary'..', "utf8mb4" for _utf8mb4'..'),
	// or "" when there is none.
	Charset string
}

// Row is one row of an INSERT statement.
//
// A Row returned by Reader.Next, and every Value.Raw in it, is only valid
// until the next call to Next: the Reader reuses its buffers. Use Clone to
// keep it longer.
type Row struct {
	Values []Value
	// Columns is the column list of the INSERT (mydumper --complete-insert),
	// nil when the statement had none. The slice is shared by every row of
	// the statement and must not be modified.
	Columns []string
	// Line is the 1-based line of the row's opening parenthesis.
	Line int
}

// Clone returns a deep copy of the row that stays valid after Next.
func (row Row) Clone() Row {
	n := 0
	for _, v := range row.Values {
		n += len(v.Raw)
	}
	buf := make([]byte, 0, n)
	vals := make([]Value, len(row.Values))
	for i, v := range row.Values {
		if v.Raw != nil {
			s := len(buf)
			buf = append(buf, v.Raw...)
			v.Raw = buf[s:len(buf):len(buf)]
		}
		vals[i] = v
	}
	return Row{Values: vals, Columns: row.Columns, Line: row.Line}
}

// Insert describes the INSERT statement the current row belongs to.
type Insert struct {
	// Verb is "INSERT", "INSERT IGNORE" or "REPLACE".
	Verb string
	// Schema is the qualifier of the table name ("" when unqualified);
	// Table is the table name, both unquoted.
	Schema, Table string
	// Columns is the column list, nil when the statement has none.
	Columns []string
	// Line is the 1-based line where the statement starts.
	Line int
}

// SyntaxError reports malformed or unsupported input in a dump file.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// String shows a value for messages and test output.
func (v Value) String() string {
	if v.Null {
		return "NULL"
	}
	cs := ""
	if v.Charset != "" {
		cs = "_" + v.Charset
	}
	return fmt.Sprintf("%s%s%q", v.Kind, cs, v.Raw)
}
