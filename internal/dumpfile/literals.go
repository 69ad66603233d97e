package dumpfile

// This file parses the literals of a row. Every literal appends its bytes
// to r.data; value records where they start and end.

// valMeta is a value being parsed. It holds no pointers, so appending it
// costs no write barrier; parseRow turns it into a Value at the row's end.
type valMeta struct {
	start, end int // the value's bytes in r.data
	kind       ValueKind
	charset    uint8 // index in r.charsets; 0 for none
}

// value parses one literal at r.pos and appends it to the current row.
func (r *Reader) value() error {
	if !r.more() {
		return r.eofErr("end of file inside a row: the file is truncated")
	}
	m := valMeta{start: len(r.data)}
	var err error
	c := r.buf[r.pos]
	switch {
	case c == '\'' || c == '"':
		m.kind, err = KindString, r.strings()
	case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
		m.kind, err = r.numeric()
	case c == '_':
		var cs string
		if m.kind, cs, err = r.introduced(); err == nil {
			m.charset, err = r.charsetIndex(cs)
		}
	case c == 'n' || c == 'N':
		w, werr := r.readWord()
		switch {
		case werr != nil:
			err = werr
		case eqFold(w, "NULL"):
			m.kind = KindNull
		default:
			err = r.errf("unexpected %q in a row: only literals are allowed", w)
		}
	default:
		m.kind, err = r.binaryLiteral()
	}
	if err != nil {
		return err
	}
	m.end = len(r.data)
	r.meta = append(r.meta, m)
	return nil
}

// charsetIndex returns the index of an introducer's charset in r.charsets,
// adding it when new.
func (r *Reader) charsetIndex(cs string) (uint8, error) {
	if len(r.charsets) == 0 {
		r.charsets = append(r.charsets, "")
	}
	for i, have := range r.charsets {
		if have == cs {
			return uint8(i), nil
		}
	}
	if len(r.charsets) == 256 {
		return 0, r.errf("too many different charset introducers")
	}
	r.charsets = append(r.charsets, cs)
	return uint8(len(r.charsets) - 1), nil
}

// introduced parses a charset introducer ("_binary", "_utf8mb4") and the
// literal that follows it.
func (r *Reader) introduced() (ValueKind, string, error) {
	w, err := r.readWord()
	if err != nil {
		return 0, "", err
	}
	if len(w) < 2 {
		return 0, "", r.errf("bad charset introducer %q", w)
	}
	charset := internCharset(w[1:])
	if err := r.skipSpace(); err != nil {
		return 0, "", err
	}
	if !r.more() {
		return 0, "", r.eofErr("end of file after a charset introducer")
	}
	var kind ValueKind
	c := r.buf[r.pos]
	switch {
	case c == '\'' || c == '"':
		kind, err = KindString, r.strings()
	case c == '0' && r.peek(2) && (r.buf[r.pos+1] == 'x' || r.buf[r.pos+1] == 'b'):
		kind, err = r.numeric()
	case (c == 'x' || c == 'X' || c == 'b' || c == 'B') && r.peek(2) && r.buf[r.pos+1] == '\'':
		kind, err = r.binaryLiteral()
	default:
		err = r.errf("unexpected %s after the charset introducer _%s (want a string, hex or bit literal)", r.describe(), charset)
	}
	return kind, charset, err
}

// internCharset returns the lower-case charset name without allocating for
// the common ones.
func internCharset(w []byte) string {
	for _, cs := range [...]string{"binary", "utf8mb4", "utf8mb3", "utf8", "latin1", "ascii"} {
		if len(w) == len(cs) && eqFoldLower(w, cs) {
			return cs
		}
	}
	return lower(string(w))
}

func eqFoldLower(w []byte, s string) bool {
	for i := range len(w) {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// binaryLiteral parses X'..' and B'..' literals; anything else at r.pos is
// not a literal the reader accepts.
func (r *Reader) binaryLiteral() (ValueKind, error) {
	c := r.buf[r.pos]
	if (c == 'x' || c == 'X' || c == 'b' || c == 'B') && r.peek(2) && r.buf[r.pos+1] == '\'' {
		line := r.line
		r.pos += 2
		hex := c == 'x' || c == 'X'
		start := len(r.data)
		for {
			if !r.more() {
				return 0, r.eofErrAt(line, "end of file inside a quoted hex or bit literal")
			}
			d := r.buf[r.pos]
			r.pos++
			if d == '\'' {
				break
			}
			if hex && unhex(d) > 15 || !hex && d != '0' && d != '1' {
				return 0, r.errf("bad digit %q in a quoted hex or bit literal", rune(d))
			}
			r.data = append(r.data, d)
		}
		if hex {
			if (len(r.data)-start)%2 != 0 {
				return 0, r.errf("X'...' literal with an odd number of hex digits")
			}
			r.data = r.data[:start+decodeHex(r.data[start:])]
			return KindHex, nil
		}
		r.data = r.data[:start+decodeBits(r.data[start:])]
		return KindBit, nil
	}
	if isWordByte(c) {
		w, err := r.readWord()
		if err != nil {
			return 0, err
		}
		return 0, r.errf("unexpected %q in a row: only literals are allowed", w)
	}
	return 0, r.errf("unexpected %s in a row: only literals are allowed", r.describe())
}

// numeric parses a number, a 0x hex literal or a 0b bit literal.
func (r *Reader) numeric() (ValueKind, error) {
	if r.buf[r.pos] == '0' && r.peek(2) && (r.buf[r.pos+1] == 'x' || r.buf[r.pos+1] == 'b') {
		hex := r.buf[r.pos+1] == 'x'
		r.pos += 2
		start := len(r.data)
		for r.more() {
			d := r.buf[r.pos]
			if hex && unhex(d) > 15 || !hex && d != '0' && d != '1' {
				break
			}
			r.data = append(r.data, d)
			r.pos++
		}
		if len(r.data) == start || r.more() && isWordByte(r.buf[r.pos]) {
			return 0, r.errf("malformed 0x or 0b literal")
		}
		if hex {
			r.data = r.data[:start+decodeHex(r.data[start:])]
			return KindHex, nil
		}
		r.data = r.data[:start+decodeBits(r.data[start:])]
		return KindBit, nil
	}
	return KindNumber, r.number()
}

// Number scanner states.
const (
	nStart = iota
	nSign
	nInt
	nFrac
	nExp
	nExpSign
	nExpDigits
)

// number parses [+-]digits[.digits][e[+-]digits] (digits may be absent on
// one side of the point) and keeps its exact text.
func (r *Reader) number() error {
	// Fast path: an integer followed by ',' or ')' within the window.
	b := r.buf[r.pos:r.end]
	i := 0
	if len(b) > 0 && b[0] == '-' {
		i++
	}
	j := i
	for j < len(b) && b[j]-'0' < 10 {
		j++
	}
	if j > i && j < len(b) && (b[j] == ',' || b[j] == ')') {
		r.data = append(r.data, b[:j]...)
		r.pos += j
		return nil
	}
	start := len(r.data)
	st, digits := nStart, false
scan:
	for r.more() {
		c := r.buf[r.pos]
		switch {
		case c >= '0' && c <= '9':
			switch st {
			case nStart, nSign:
				st = nInt
			case nExp, nExpSign:
				st = nExpDigits
			}
			if st == nInt || st == nFrac {
				digits = true
			}
		case c == '-' || c == '+':
			switch st {
			case nStart:
				st = nSign
			case nExp:
				st = nExpSign
			default:
				break scan
			}
		case c == '.':
			if st > nInt {
				break scan
			}
			st = nFrac
		case c == 'e' || c == 'E':
			if !digits || st != nInt && st != nFrac {
				break scan
			}
			st = nExp
		default:
			break scan
		}
		r.data = append(r.data, c)
		r.pos++
	}
	if !digits || st == nSign || st == nExp || st == nExpSign || r.more() && (isWordByte(r.buf[r.pos]) || r.buf[r.pos] == '.') {
		text := string(r.data[start:])
		if r.more() && isWordByte(r.buf[r.pos]) {
			w, _ := r.readWord()
			text += string(w)
		}
		return r.errf("malformed number %q", text)
	}
	return nil
}

// strings parses one quoted string, or several adjacent ones ('a' 'b'),
// which SQL concatenates.
func (r *Reader) strings() error {
	for {
		if err := r.quoted(r.buf[r.pos]); err != nil {
			return err
		}
		if !r.more() {
			return nil
		}
		if c := r.buf[r.pos]; c == ',' || c == ')' {
			return nil // the usual case: no space after the string
		}
		if err := r.skipSpace(); err != nil {
			return err
		}
		if !r.more() || r.buf[r.pos] != '\'' && r.buf[r.pos] != '"' {
			return nil
		}
	}
}

// quoted parses a string quoted by q (at r.pos) and appends its unescaped
// bytes. Backslash escapes follow MySQL: \0 \b \n \r \t \Z map to control
// bytes, \% and \_ keep their backslash, a backslash before any other byte
// stands for that byte; a doubled quote stands for one quote. All other
// bytes, newlines and invalid UTF-8 included, are kept as they are.
func (r *Reader) quoted(q byte) error {
	line := r.line
	r.pos++
	for {
		chunk := r.buf[r.pos:r.end]
		i := 0
		for i < len(chunk) {
			c := chunk[i]
			if c == q || c == '\\' || c == '\n' {
				break
			}
			i++
		}
		r.data = append(r.data, chunk[:i]...)
		r.pos += i
		if i == len(chunk) {
			if !r.fill() {
				return r.eofErrAt(line, "unterminated string: end of file inside quotes")
			}
			continue
		}
		r.pos++
		switch chunk[i] {
		case '\n':
			r.line++
			r.data = append(r.data, '\n')
		case '\\':
			if !r.more() {
				return r.eofErrAt(line, "unterminated string: end of file after a backslash")
			}
			e := r.buf[r.pos]
			r.pos++
			switch e {
			case '0':
				e = 0
			case 'b':
				e = '\b'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			case 'Z':
				e = 0x1a
			case '%', '_':
				r.data = append(r.data, '\\')
			case '\n':
				r.line++
			}
			r.data = append(r.data, e)
		default: // the quote
			if !r.more() || r.buf[r.pos] != q {
				return nil
			}
			r.pos++
			r.data = append(r.data, q)
		}
	}
}
