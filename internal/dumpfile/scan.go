package dumpfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// This file holds the Reader's byte-level machinery: the input window,
// whitespace and comments, words and identifiers, and error helpers.

// more reports whether a byte is available at r.pos, reading if needed.
func (r *Reader) more() bool {
	if r.pos < r.end {
		return true
	}
	return r.fill()
}

// fill moves the unread bytes to the front of the window and reads once
// more from the source. It reports whether a byte is available at r.pos.
func (r *Reader) fill() bool {
	if r.srcErr != nil {
		return r.pos < r.end
	}
	if r.pos > 0 {
		r.end = copy(r.buf, r.buf[r.pos:r.end])
		r.pos = 0
	}
	for tries := 0; r.end < len(r.buf); tries++ {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.srcErr = err
			break
		}
		if n > 0 {
			break
		}
		if tries == 100 {
			r.srcErr = io.ErrNoProgress
			break
		}
	}
	return r.pos < r.end
}

// peek reports whether k bytes are available from r.pos (k is small).
func (r *Reader) peek(k int) bool {
	for r.end-r.pos < k {
		before := r.end - r.pos
		r.fill()
		if r.end-r.pos == before {
			return false
		}
	}
	return true
}

// srcFailure returns the source's error, wrapped with the file name, unless
// it is io.EOF or there was none.
func (r *Reader) srcFailure() error {
	if r.srcErr == nil || errors.Is(r.srcErr, io.EOF) {
		return nil
	}
	return fmt.Errorf("read %s: %w", r.name, r.srcErr)
}

// spaceStart marks the bytes at which skipSpace may have something to skip.
var spaceStart = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '\f': true, '\v': true,
	'#': true, '-': true, '/': true, '*': true}

// skipSpace skips whitespace, comments ("-- ", "#", "/* */") and the
// markers of versioned comments ("/*!40101" and its "*/"), whose content
// is SQL. It stops at the first other byte or at the end of input.
func (r *Reader) skipSpace() error {
	for {
		if r.pos >= r.end && !r.fill() {
			return nil
		}
		switch r.buf[r.pos] {
		case ' ', '\t', '\r', '\f', '\v':
			r.pos++
		case '\n':
			r.pos++
			r.line++
		case '#':
			r.skipLine()
		case '-':
			if !r.peek(2) || r.buf[r.pos+1] != '-' || (r.peek(3) && r.buf[r.pos+2] > ' ') {
				return nil // "--" starts a comment only before a space, a control byte or EOF
			}
			r.skipLine()
		case '*':
			if !r.versioned || !r.peek(2) || r.buf[r.pos+1] != '/' {
				return nil
			}
			r.pos += 2
			r.versioned = false
		case '/':
			if !r.peek(2) || r.buf[r.pos+1] != '*' {
				return nil
			}
			if err := r.comment(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// skipLine skips to just after the next newline, or to the end of input.
func (r *Reader) skipLine() {
	for r.more() {
		if i := bytes.IndexByte(r.buf[r.pos:r.end], '\n'); i >= 0 {
			r.pos += i + 1
			r.line++
			return
		}
		r.pos = r.end
	}
}

// comment handles "/*" at r.pos: a versioned comment's opening marker
// ("/*!", "/*!40101", "/*M!100100") or a whole plain comment.
func (r *Reader) comment() error {
	line := r.line
	if r.peek(3) && r.buf[r.pos+2] == '!' || r.peek(4) && r.buf[r.pos+2] == 'M' && r.buf[r.pos+3] == '!' {
		if r.versioned {
			return r.errf("nested /*! comment")
		}
		r.pos += 3
		if r.buf[r.pos-1] == 'M' {
			r.pos++
		}
		for r.more() && r.buf[r.pos] >= '0' && r.buf[r.pos] <= '9' {
			r.pos++
		}
		r.versioned = true
		return nil
	}
	r.pos += 2
	for r.more() {
		c := r.buf[r.pos]
		r.pos++
		if c == '\n' {
			r.line++
		} else if c == '*' && r.more() && r.buf[r.pos] == '/' {
			r.pos++
			return nil
		}
	}
	if err := r.srcFailure(); err != nil {
		return err
	}
	return &SyntaxError{File: r.name, Line: line, Msg: "unterminated /* comment"}
}

// isWordByte reports whether c can be part of an unquoted word or name.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// readWord reads an unquoted word (keyword or name). The result is empty
// when r.pos is not at a word, and valid until the next readWord.
func (r *Reader) readWord() ([]byte, error) {
	r.word = r.word[:0]
	for r.more() && isWordByte(r.buf[r.pos]) {
		if len(r.word) == 256 {
			return nil, r.errf("word too long")
		}
		r.word = append(r.word, r.buf[r.pos])
		r.pos++
	}
	return r.word, nil
}

// identifier reads a name: `quoted` (with “ for a backtick) or unquoted.
func (r *Reader) identifier() (string, error) {
	if !r.more() {
		return "", r.eofErr("end of file where a name was expected")
	}
	if r.buf[r.pos] != '`' {
		w, err := r.readWord()
		if err != nil {
			return "", err
		}
		if len(w) == 0 {
			return "", r.errf("unexpected %s where a name was expected", r.describe())
		}
		return string(w), nil
	}
	line := r.line
	r.pos++
	r.word = r.word[:0]
	for r.more() {
		c := r.buf[r.pos]
		r.pos++
		if c == '`' {
			if !r.more() || r.buf[r.pos] != '`' {
				return string(r.word), nil
			}
			r.pos++
		} else if c == '\n' {
			r.line++
		}
		if len(r.word) == 4096 {
			return "", r.errf("name too long")
		}
		r.word = append(r.word, c)
	}
	return "", r.eofErrAt(line, "end of file inside a `quoted` name")
}

// skipToSemicolon skips the rest of a statement up to and including ';',
// stepping over quoted strings, names and comments.
func (r *Reader) skipToSemicolon(what string) error {
	for {
		if err := r.skipSpace(); err != nil {
			return err
		}
		if !r.more() {
			return r.eofErr(fmt.Sprintf("end of file inside %s statement (missing ';')", what))
		}
		switch c := r.buf[r.pos]; c {
		case ';':
			if r.versioned {
				return r.errf("';' inside a /*! comment")
			}
			r.pos++
			return nil
		case '\'', '"':
			r.data = r.data[:0]
			if err := r.quoted(c); err != nil {
				return err
			}
		case '`':
			if _, err := r.identifier(); err != nil {
				return err
			}
		default:
			r.pos++
		}
	}
}

// errf returns a *SyntaxError at the current line.
func (r *Reader) errf(format string, args ...any) error {
	if err := r.srcFailure(); err != nil && r.pos >= r.end {
		return err
	}
	return &SyntaxError{File: r.name, Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

// eofErr reports an unexpected end of input at the current line, or the
// source's read error when the input ended because of one.
func (r *Reader) eofErr(msg string) error { return r.eofErrAt(r.line, msg) }

func (r *Reader) eofErrAt(line int, msg string) error {
	if err := r.srcFailure(); err != nil {
		return err
	}
	return &SyntaxError{File: r.name, Line: line, Msg: msg}
}

// describe names the token at r.pos for an error message.
func (r *Reader) describe() string {
	if !r.more() {
		return "end of file"
	}
	c := r.buf[r.pos]
	if !isWordByte(c) {
		return fmt.Sprintf("%q", rune(c))
	}
	r.peek(32)
	e := r.pos
	for e < r.end && e-r.pos < 32 && isWordByte(r.buf[e]) {
		e++
	}
	return fmt.Sprintf("%q", r.buf[r.pos:e])
}

// eqFold reports whether w equals the upper-case ASCII keyword kw,
// ignoring ASCII case.
func eqFold(w []byte, kw string) bool {
	if len(w) != len(kw) {
		return false
	}
	for i := range len(w) {
		c := w[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

func upper(w []byte) string { return string(bytes.ToUpper(w)) }

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }
