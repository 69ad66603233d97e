package dumpfile

import (
	"fmt"
	"io"
)

// readerBufSize is the size of the Reader's input window.
const readerBufSize = 256 << 10

// maxKeptRowBuf: a value buffer grown past this by one large row is dropped
// before the next row, so one huge row does not pin its memory for the rest
// of the file.
const maxKeptRowBuf = 16 << 20

type readerState uint8

const (
	stTop      readerState = iota // between statements
	stAfterRow                    // after a row of an INSERT: ',' or ';' next
)

// Reader returns the rows of a mydumper data file one at a time.
//
// Memory is bounded by a fixed input window plus the largest row: neither
// a whole file nor a whole statement is ever held. A Reader is not safe for
// concurrent use.
type Reader struct {
	src  io.Reader
	name string

	buf      []byte
	pos, end int
	srcErr   error // first error from src (io.EOF at the end)
	line     int   // 1-based line of buf[pos]

	state     readerState
	versioned bool // inside a /*!NNNNN ... */ comment
	ins       Insert
	want      int // values per row in the current statement, -1 unknown
	names     string
	timeZone  string

	vals     []Value
	meta     []valMeta
	charsets []string // charsets of introducers; [0] is ""
	data     []byte
	word     []byte
	err      error // sticky
}

// NewReader returns a Reader of the data file read from r; name is used in
// error messages (usually the file name, e.g. "shop.orders.00001.sql").
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{src: r, name: name, buf: make([]byte, readerBufSize), line: 1, want: -1}
}

// Insert returns the INSERT statement of the row last returned by Next.
func (r *Reader) Insert() Insert { return r.ins }

// TimeZone returns the value of the last "SET TIME_ZONE" statement seen
// ("+00:00" for mydumper unless run with --skip-tz-utc), or "" if there
// was none. TIMESTAMP values in the file are in that zone.
func (r *Reader) TimeZone() string { return r.timeZone }

// Names returns the character set of the last "SET NAMES" statement seen
// ("binary" for mydumper), in lower case, or "" if there was none.
func (r *Reader) Names() string { return r.names }

// Next returns the next row. At the end of the input it returns io.EOF;
// on malformed input a *SyntaxError; on a read failure the source's error
// wrapped with the file name. After an error every call returns it again.
func (r *Reader) Next() (Row, error) {
	if r.err != nil {
		return Row{}, r.err
	}
	row, err := r.next()
	if err != nil {
		r.err = err
	}
	return row, err
}

func (r *Reader) next() (Row, error) {
	for {
		if r.state == stAfterRow {
			if err := r.skipSpace(); err != nil {
				return Row{}, err
			}
			if !r.more() {
				return Row{}, r.eofErr("end of file inside INSERT statement (missing ';'): the file is truncated")
			}
			switch c := r.buf[r.pos]; c {
			case ',':
				r.pos++
				if err := r.expectRowStart(); err != nil {
					return Row{}, err
				}
				return r.parseRow()
			case ';':
				r.pos++
				r.state = stTop
				continue
			default:
				return Row{}, r.errf("unexpected %s after a row (want ',' or ';')", r.describe())
			}
		}
		if err := r.skipSpace(); err != nil {
			return Row{}, err
		}
		if !r.more() {
			if err := r.srcFailure(); err != nil {
				return Row{}, err
			}
			if r.versioned {
				return Row{}, r.errf("end of file inside a /*! comment")
			}
			return Row{}, io.EOF
		}
		if err := r.statement(); err != nil {
			return Row{}, err
		}
		if r.state == stAfterRow { // an INSERT: its first row is next
			return r.parseRow()
		}
	}
}

// statement parses one statement at the top level: a SET is skipped whole;
// for an INSERT the head is parsed, the state becomes stAfterRow and the
// reader stops at the first row's '('.
func (r *Reader) statement() error {
	c := r.buf[r.pos]
	if c == ';' { // empty statement
		r.pos++
		return nil
	}
	startLine := r.line
	w, err := r.readWord()
	if err != nil {
		return err
	}
	switch {
	case len(w) == 0:
		return r.errf("unexpected %s at the start of a statement", r.describe())
	case eqFold(w, "INSERT"), eqFold(w, "REPLACE"):
		if err := r.insertHead(eqFold(w, "REPLACE"), startLine); err != nil {
			return err
		}
		r.state = stAfterRow
		return r.expectRowStart()
	case eqFold(w, "SET"):
		return r.setStatement()
	default:
		return &SyntaxError{File: r.name, Line: startLine,
			Msg: fmt.Sprintf("unexpected %s statement in a data file (only INSERT, REPLACE and SET are allowed)", upper(w))}
	}
}

// insertHead parses "INSERT [modifiers] [INTO] tbl [(cols)] VALUES" or the
// REPLACE form, leaving the reader before the first row.
func (r *Reader) insertHead(replace bool, line int) error {
	verb := "INSERT"
	if replace {
		verb = "REPLACE"
	}
	r.ins = Insert{Verb: verb, Line: line}
	r.want = -1
	name := ""
	for name == "" {
		if err := r.skipSpace(); err != nil {
			return err
		}
		if !r.more() {
			return r.eofErr("end of file inside INSERT statement")
		}
		if !isWordByte(r.buf[r.pos]) {
			break // a quoted table name
		}
		w, err := r.readWord()
		if err != nil {
			return err
		}
		switch {
		case eqFold(w, "LOW_PRIORITY"), eqFold(w, "DELAYED"), eqFold(w, "HIGH_PRIORITY"), eqFold(w, "INTO"):
		case eqFold(w, "IGNORE") && !replace:
			r.ins.Verb = "INSERT IGNORE"
		default:
			name = string(w) // an unquoted table name
		}
	}
	if name == "" {
		var err error
		if name, err = r.identifier(); err != nil {
			return err
		}
	}
	r.ins.Table = name
	if err := r.skipSpace(); err != nil {
		return err
	}
	if r.more() && r.buf[r.pos] == '.' {
		r.pos++
		if err := r.skipSpace(); err != nil {
			return err
		}
		table, err := r.identifier()
		if err != nil {
			return err
		}
		r.ins.Schema, r.ins.Table = name, table
		if err := r.skipSpace(); err != nil {
			return err
		}
	}
	if r.more() && r.buf[r.pos] == '(' {
		r.pos++
		if err := r.columnList(); err != nil {
			return err
		}
		if err := r.skipSpace(); err != nil {
			return err
		}
	}
	w, err := r.readWord()
	if err != nil {
		return err
	}
	if !eqFold(w, "VALUES") && !eqFold(w, "VALUE") {
		if len(w) == 0 {
			return r.errf("unexpected %s in INSERT statement (want VALUES)", r.describe())
		}
		return r.errf("unsupported INSERT ... %s (only INSERT ... VALUES is allowed)", upper(w))
	}
	return nil
}

// columnList parses "a, `b`)" after the opening parenthesis.
func (r *Reader) columnList() error {
	var cols []string
	for {
		if err := r.skipSpace(); err != nil {
			return err
		}
		name, err := r.identifier()
		if err != nil {
			return err
		}
		cols = append(cols, name)
		if err := r.skipSpace(); err != nil {
			return err
		}
		if !r.more() {
			return r.eofErr("end of file inside the column list")
		}
		switch r.buf[r.pos] {
		case ',':
			r.pos++
		case ')':
			r.pos++
			r.ins.Columns = cols
			r.want = len(cols)
			return nil
		default:
			return r.errf("unexpected %s in the column list", r.describe())
		}
	}
}

// setStatement skips "SET ...;" after the SET keyword, noting SET NAMES
// and SET TIME_ZONE.
func (r *Reader) setStatement() error {
	if err := r.skipSpace(); err != nil {
		return err
	}
	w, err := r.readWord()
	if err != nil {
		return err
	}
	switch {
	case eqFold(w, "NAMES"):
		name, err := r.setValue(false)
		if err != nil {
			return err
		}
		if err := r.setNames(name); err != nil {
			return err
		}
	case eqFold(w, "TIME_ZONE"):
		tz, err := r.setValue(true)
		if err != nil {
			return err
		}
		r.timeZone = tz
	}
	return r.skipToSemicolon("SET")
}

// setValue reads the value of SET NAMES x or SET TIME_ZONE = 'x': a name or
// a quoted string, after '=' when eq is set.
func (r *Reader) setValue(eq bool) (string, error) {
	if err := r.skipSpace(); err != nil {
		return "", err
	}
	if eq {
		if !r.more() || r.buf[r.pos] != '=' {
			return "", r.errf("unexpected %s in SET statement (want '=')", r.describe())
		}
		r.pos++
		if err := r.skipSpace(); err != nil {
			return "", err
		}
	}
	if r.more() && (r.buf[r.pos] == '\'' || r.buf[r.pos] == '"') {
		r.data = r.data[:0]
		if err := r.quoted(r.buf[r.pos]); err != nil {
			return "", err
		}
		return string(r.data), nil
	}
	return r.identifier()
}

// unsafeNames are character sets in which byte 0x5C ('\') can be the second
// byte of a multi-byte character, so byte-wise unescaping would be wrong.
var unsafeNames = map[string]bool{"big5": true, "cp932": true, "gbk": true, "sjis": true, "gb18030": true}

func (r *Reader) setNames(name string) error {
	name = lower(name)
	if unsafeNames[name] {
		return r.errf("SET NAMES %s is not supported: in %s a '\\' byte can be part of a character", name, name)
	}
	r.names = name
	return nil
}

// expectRowStart skips space and checks that a row's '(' is next.
func (r *Reader) expectRowStart() error {
	if err := r.skipSpace(); err != nil {
		return err
	}
	if !r.more() {
		return r.eofErr("end of file where a row was expected: the file is truncated")
	}
	if r.buf[r.pos] != '(' {
		return r.errf("unexpected %s where a row '(' was expected", r.describe())
	}
	return nil
}

// parseRow parses "(v1, v2, ...)" starting at '('.
func (r *Reader) parseRow() (Row, error) {
	line := r.line
	r.pos++ // '('
	if cap(r.data) > maxKeptRowBuf {
		r.data = nil
	}
	r.data, r.meta = r.data[:0], r.meta[:0]
	for {
		if r.pos >= r.end || spaceStart[r.buf[r.pos]] {
			if err := r.skipSpace(); err != nil {
				return Row{}, err
			}
		}
		if err := r.value(); err != nil {
			return Row{}, err
		}
		if r.pos >= r.end || spaceStart[r.buf[r.pos]] {
			if err := r.skipSpace(); err != nil {
				return Row{}, err
			}
		}
		if !r.more() {
			return Row{}, r.eofErrAt(line, "end of file inside a row: the file is truncated")
		}
		c := r.buf[r.pos]
		r.pos++
		if c == ',' {
			continue
		}
		if c == ')' {
			break
		}
		r.pos--
		return Row{}, r.errf("unexpected %s in a row (want ',' or ')')", r.describe())
	}
	n := len(r.meta)
	if r.want < 0 {
		r.want = n
	} else if n != r.want {
		what := "the first row of the statement"
		if r.ins.Columns != nil {
			what = "the column list"
		}
		return Row{}, &SyntaxError{File: r.name, Line: line,
			Msg: fmt.Sprintf("row has %d values, %s has %d", n, what, r.want)}
	}
	if cap(r.vals) < n {
		r.vals = make([]Value, n)
	}
	r.vals = r.vals[:n]
	for i, m := range r.meta {
		v := Value{Kind: m.kind}
		if m.kind == KindNull {
			v.Null = true
		} else {
			v.Raw = r.data[m.start:m.end:m.end]
			if m.charset != 0 {
				v.Charset = r.charsets[m.charset]
			}
		}
		r.vals[i] = v
	}
	return Row{Values: r.vals, Columns: r.ins.Columns, Line: line}, nil
}
