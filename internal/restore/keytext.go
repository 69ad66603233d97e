package restore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// Text is the key of row as the checkpoint stores it (last_key, a part's
// bounds): a JSON array of the key's values in key order, each a string
// (its SQL text form), null for NULL, or {"base64": "..."} for a value
// that is not valid UTF-8, so that Parse gives back exactly the bytes.
// A table without a key has no key text ("").
func (o *KeyOrder) Text(row []rowimage.Cell) string {
	if o == nil {
		return ""
	}
	vals := make([]any, len(o.idx))
	for i, j := range o.idx {
		switch c := row[j]; {
		case c.Null:
		case utf8.Valid(c.Text):
			vals[i] = string(c.Text)
		default:
			vals[i] = map[string]string{"base64": base64.StdEncoding.EncodeToString(c.Text)}
		}
	}
	b, _ := json.Marshal(vals) // strings and maps of strings always marshal
	return string(b)
}

// Parse turns a key Text back into a row of ncols cells whose key cells
// are the key's values (the others empty), for Compare.
func (o *KeyOrder) Parse(text string, ncols int) ([]rowimage.Cell, error) {
	var vals []json.RawMessage
	if err := json.Unmarshal([]byte(text), &vals); err != nil {
		return nil, fmt.Errorf("key %s: %w", text, err)
	}
	if len(vals) != len(o.idx) {
		return nil, fmt.Errorf("key %s has %d values, the table's key %d columns", text, len(vals), len(o.idx))
	}
	row := make([]rowimage.Cell, ncols)
	for i, j := range o.idx {
		if j >= ncols {
			return nil, fmt.Errorf("key column %d of %d columns", j+1, ncols)
		}
		c, err := parseKeyValue(vals[i])
		if err != nil {
			return nil, fmt.Errorf("key %s value %d: %w", text, i+1, err)
		}
		row[j] = c
	}
	return row, nil
}

func parseKeyValue(v json.RawMessage) (rowimage.Cell, error) {
	if string(v) == "null" {
		return rowimage.NullCell(), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return rowimage.TextCell([]byte(s)), nil
	}
	var b struct{ Base64 *string }
	if err := json.Unmarshal(v, &b); err != nil || b.Base64 == nil {
		return rowimage.Cell{}, fmt.Errorf("want a string, null or {\"base64\": ...}, got %s", v)
	}
	raw, err := base64.StdEncoding.DecodeString(*b.Base64)
	if err != nil {
		return rowimage.Cell{}, err
	}
	return rowimage.TextCell(raw), nil
}
