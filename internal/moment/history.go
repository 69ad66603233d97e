package moment

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// KeyError is a row key that does not parse for its table.
type KeyError struct {
	Table, Key, Why string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("key %q of %s does not parse: %s", e.Key, e.Table, e.Why)
}

// ParseKey turns a row key as a user writes it into the canonical key text
// of t's rows (change.Event.PK): the key column values as SELECT prints them,
// either one value alone (a one-column key: 42, abc) or a JSON array of
// them in key order ([7,"abc"]; numbers or strings, null only where a table
// without a key allows it). A binary column's value may be written as 0x
// and hex digits. Every value is checked against its column's type.
func ParseKey(t *schema.Table, text string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", &KeyError{Table: t.QualifiedName(), Key: text, Why: fmt.Sprintf(format, args...)}
	}
	names := t.Key
	if len(names) == 0 {
		names = t.ColumnNames()
	}
	var vals []*string
	trimmed := strings.TrimSpace(text)
	if strings.HasPrefix(trimmed, "[") {
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &raw); err != nil {
			return fail("not a JSON array: %v", err)
		}
		for _, r := range raw {
			var s string
			switch {
			case string(r) == "null":
				vals = append(vals, nil)
				continue
			case len(r) > 0 && r[0] == '"':
				if err := json.Unmarshal(r, &s); err != nil {
					return fail("%v", err)
				}
			case len(r) > 0 && (r[0] == '-' || (r[0] >= '0' && r[0] <= '9')):
				s = string(r)
			default:
				return fail("element %s is neither a string, a number nor null", r)
			}
			vals = append(vals, &s)
		}
	} else {
		if len(names) != 1 {
			return fail("the key of %s has %d columns (%s): give them as a JSON array, e.g. '[7,\"abc\"]'", t.QualifiedName(), len(names), strings.Join(names, ", "))
		}
		vals = append(vals, &text)
	}
	if len(vals) != len(names) {
		return fail("%d values for the %d key columns (%s)", len(vals), len(names), strings.Join(names, ", "))
	}
	b := []byte{'['}
	for i, name := range names {
		j := t.ColumnIndex(name)
		if j < 0 {
			return fail("key column %s is not a column", name)
		}
		c := &t.Columns[j]
		if i > 0 {
			b = append(b, ',')
		}
		if vals[i] == nil {
			if t.KeyKind != schema.KeyRow {
				return fail("key column %s cannot be NULL", name)
			}
			b = append(b, "null"...)
			continue
		}
		v := []byte(*vals[i])
		if class, _ := rowimage.ClassOf(c); class == rowimage.ClassBinary && strings.HasPrefix(*vals[i], "0x") {
			dec, err := hex.DecodeString((*vals[i])[2:])
			if err != nil {
				return fail("column %s: %q is not 0x and hex digits", name, *vals[i])
			}
			v = dec
		}
		var err error
		if b, err = rowimage.AppendSQLValue(b, c, rowimage.TextCell(v)); err != nil {
			return fail("column %s (%s): %v", name, c.Type, err)
		}
	}
	return string(append(b, ']')), nil
}

// maxSpans bounds the keys a row's history follows.
const maxSpans = 10000

// RowHistory passes to fn, oldest first, every change of the row of
// schema.table whose key is key, from ev (the index and the archives),
// following key changes. Every change of key itself is included (a key
// deleted and inserted again is the same row's history). An update that
// moved a row to another key continues its history under that key until
// the row is deleted or moves again; one that moved a row to key from
// another adds that key's changes before it, back to the row's insert (or
// its move there from yet another key).
func RowHistory(ctx context.Context, ev Events, source, schemaName, table, key string, fn func(change.Event) error) error {
	const (
		whole    = iota // every change of the key
		forward         // from a move to the key until the row leaves it
		backward        // back from a move away from the key to the row's start
	)
	type span struct {
		key  string
		dir  int
		edge uint64 // forward: the move's seq; backward: the move's seq
	}
	byKey := map[string][]change.Event{}
	load := func(k string) ([]change.Event, error) {
		if evs, ok := byKey[k]; ok {
			return evs, nil
		}
		var evs []change.Event
		if err := ev.KeyEvents(ctx, source, schemaName, table, k, func(e change.Event) error {
			evs = append(evs, e)
			return nil
		}); err != nil {
			return nil, err
		}
		byKey[k] = evs
		return evs, nil
	}
	queue := []span{{key: key, dir: whole}}
	seen := map[span]bool{}
	got := map[uint64]change.Event{}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if seen[s] {
			continue
		}
		if seen[s] = true; len(seen) > maxSpans {
			return fmt.Errorf("history of %s.%s key %s: the row moved between more than %d keys", schemaName, table, key, maxSpans)
		}
		evs, err := load(s.key)
		if err != nil {
			return err
		}
		movedAway := func(e change.Event) bool { return e.PKBefore == s.key && e.PK != s.key }
		movedHere := func(e change.Event) bool { return e.PK == s.key && e.PKBefore != "" && e.PKBefore != s.key }
		switch s.dir {
		case whole:
			for _, e := range evs {
				got[e.Seq] = e
				if movedAway(e) {
					queue = append(queue, span{key: e.PK, dir: forward, edge: e.Seq})
				}
				if movedHere(e) {
					queue = append(queue, span{key: e.PKBefore, dir: backward, edge: e.Seq})
				}
			}
		case forward:
			for _, e := range evs {
				if e.Seq < s.edge {
					continue
				}
				got[e.Seq] = e
				if e.Seq > s.edge && movedAway(e) {
					queue = append(queue, span{key: e.PK, dir: forward, edge: e.Seq})
					break
				}
				if e.Op == change.OpDelete {
					break
				}
			}
		case backward:
			for i := len(evs) - 1; i >= 0; i-- {
				e := evs[i]
				if e.Seq > s.edge {
					continue
				}
				got[e.Seq] = e
				if e.Seq < s.edge && movedHere(e) {
					queue = append(queue, span{key: e.PKBefore, dir: backward, edge: e.Seq})
					break
				}
				if e.Op == change.OpInsert {
					break
				}
			}
		}
	}
	seqs := make([]uint64, 0, len(got))
	for s := range got {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	for _, s := range seqs {
		if err := fn(got[s]); err != nil {
			return err
		}
	}
	return nil
}
