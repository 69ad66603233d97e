package rowimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Field is one column of a decoded image.
type Field struct {
	Name string
	// Raw is the value's canonical JSON text exactly as it appears in the
	// image (it aliases the image's bytes; copy it to keep it longer).
	Raw json.RawMessage
}

// maxDepth bounds nesting in DecodeImage; canonical values are scalars.
const maxDepth = 64

// DecodeImage parses an image back into its fields in order. It accepts any
// JSON object (whitespace between tokens, nested values) and rejects anything
// that is not valid JSON; a value's Raw excludes surrounding whitespace.
func DecodeImage(image []byte) ([]Field, error) {
	d := scanner{b: image}
	d.ws()
	if !d.eat('{') {
		return nil, d.fail("expected '{'")
	}
	fields := make([]Field, 0, bytes.Count(image, []byte{':'})) // upper bound for canonical images
	d.ws()
	if !d.eat('}') {
		for {
			d.ws()
			start := d.i
			esc, err := d.str()
			if err != nil {
				return nil, err
			}
			name, err := decodeName(image[start:d.i], esc)
			if err != nil {
				return nil, err
			}
			d.ws()
			if !d.eat(':') {
				return nil, d.fail("expected ':'")
			}
			d.ws()
			start = d.i
			if err := d.value(0); err != nil {
				return nil, err
			}
			fields = append(fields, Field{Name: name, Raw: image[start:d.i:d.i]})
			d.ws()
			if d.eat('}') {
				break
			}
			if !d.eat(',') {
				return nil, d.fail("expected ',' or '}'")
			}
		}
	}
	d.ws()
	if d.i != len(d.b) {
		return nil, d.fail("data after the object")
	}
	return fields, nil
}

// decodeName returns the Go string of a quoted JSON string token.
func decodeName(tok []byte, esc bool) (string, error) {
	if !esc {
		return string(tok[1 : len(tok)-1]), nil
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", fmt.Errorf("image: bad field name %s: %w", tok, err)
	}
	return s, nil
}

type scanner struct {
	b []byte
	i int
}

func (d *scanner) fail(msg string) error {
	return fmt.Errorf("image: %s at byte %d", msg, d.i)
}

func (d *scanner) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *scanner) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// str scans a JSON string token and reports whether it holds escapes.
func (d *scanner) str() (esc bool, err error) {
	if !d.eat('"') {
		return false, d.fail("expected string")
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			if !utf8.Valid(d.b[start:d.i]) {
				return false, d.fail("string is not UTF-8")
			}
			d.i++
			return esc, nil
		case c < 0x20:
			return false, d.fail("control character in string")
		case c == '\\':
			esc = true
			if d.i+1 >= len(d.b) {
				return false, d.fail("truncated escape")
			}
			switch d.b[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				if d.i+6 > len(d.b) {
					return false, d.fail("truncated \\u escape")
				}
				for _, h := range d.b[d.i+2 : d.i+6] {
					if _, ok := unhex(h); !ok {
						return false, d.fail("bad \\u escape")
					}
				}
				d.i += 6
			default:
				return false, d.fail("bad escape")
			}
		default:
			d.i++
		}
	}
	return false, d.fail("unterminated string")
}

var errDepth = errors.New("image: nesting too deep")

// value scans one JSON value.
func (d *scanner) value(depth int) error {
	if d.i >= len(d.b) {
		return d.fail("expected value")
	}
	switch c := d.b[d.i]; {
	case c == '"':
		_, err := d.str()
		return err
	case c == '-' || isDigit(c):
		return d.number()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '[' || c == '{':
		if depth >= maxDepth {
			return errDepth
		}
		return d.composite(depth)
	}
	return d.fail("unexpected character")
}

func (d *scanner) literal(s string) error {
	if !bytes.HasPrefix(d.b[d.i:], []byte(s)) {
		return d.fail("bad literal")
	}
	d.i += len(s)
	return nil
}

// number scans -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func (d *scanner) number() error {
	d.eat('-')
	digits := func() int {
		n := 0
		for d.i < len(d.b) && isDigit(d.b[d.i]) {
			d.i++
			n++
		}
		return n
	}
	if d.eat('0') {
		// a leading zero stands alone
	} else if digits() == 0 {
		return d.fail("bad number")
	}
	if d.eat('.') && digits() == 0 {
		return d.fail("bad number")
	}
	if d.eat('e') || d.eat('E') {
		if !d.eat('+') {
			d.eat('-')
		}
		if digits() == 0 {
			return d.fail("bad number")
		}
	}
	return nil
}

func (d *scanner) composite(depth int) error {
	open := d.b[d.i]
	close := byte(']')
	if open == '{' {
		close = '}'
	}
	d.i++
	d.ws()
	if d.eat(close) {
		return nil
	}
	for {
		d.ws()
		if open == '{' {
			if _, err := d.str(); err != nil {
				return err
			}
			d.ws()
			if !d.eat(':') {
				return d.fail("expected ':'")
			}
			d.ws()
		}
		if err := d.value(depth + 1); err != nil {
			return err
		}
		d.ws()
		if d.eat(close) {
			return nil
		}
		if !d.eat(',') {
			return d.fail("expected ',' or closing bracket")
		}
	}
}
