package index

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// The index stores events packed: one row of event_chunks holds a run of
// consecutive events (by seq) of one table, so capture inserts one InnoDB row
// per run instead of one per event. The view `events` unpacks them again
// with JSON_TABLE, one row per event, for plain SQL.
//
// A chunk's header columns are those of its first event. Its `events` column
// is a JSON array with one object per event, keys in this order:
//
//	{"s":seq,"t":"commit time","g":"gtid","e":end_pos,"o":"op","k":key,"kb":old key,"b":before,"a":after}
//
// "t", "g" and "e" are present only when they differ from the chunk's
// header; "kb", "b" and "a" only when the event has them. "k" and "kb" are
// the canonical key text (a JSON array), "b" and "a" the JSON images, stored
// as they are, not re-encoded.
//
// Invariants the readers rely on:
//   - chunks of a source never overlap in seq: each is a run of consecutive
//     events whose seqs follow each other without a hole (a chunk [a, b]
//     holds every seq from a to b), and seqs grow. Capture's batches have
//     no holes; restore-index packs one hour at a time, whose seqs may
//     skip those of other hours, so a hole ends a chunk;
//   - a chunk holds one table, one schema version, one hour (partition) and
//     one binlog file;
//   - an event whose end position is not known yet (0, a streamed
//     transaction) is only in a chunk whose header end_pos is 0, and never
//     carries its own "e": SetEndPos fixes the header alone.

// Bounds of one chunk. Larger chunks mean fewer rows to insert; smaller ones
// less to read for a window that starts inside one. A chunk of at most
// chunkMaxBytes fits one INSERT within targetStmtBytes.
const (
	chunkMaxEvents = 1000
	chunkMaxBytes  = 250 << 10
)

// chunk is one event_chunks row before it is stored.
type chunk struct {
	head     *Event // the first event: header columns
	firstSeq uint64
	lastSeq  uint64
	n        int
	payload  []byte // the JSON array
}

// sameRun reports whether e may join a chunk whose first event is head.
func sameRun(head, e *Event) bool {
	return e.Table == head.Table && e.Schema == head.Schema && e.SchemaVersion == head.SchemaVersion &&
		e.BinlogFile == head.BinlogFile && HourID(e.CommitTime) == HourID(head.CommitTime) &&
		(e.EndPos != 0 || head.EndPos == 0)
}

// packChunks splits evs (seq order, all checked) into chunks. The payloads
// share one buffer, buf's storage reused (the grown buffer is returned).
func packChunks(buf []byte, evs []Event) ([]chunk, []byte) {
	need := 2
	for i := range evs {
		need += eventSize(&evs[i]) + 2
	}
	if cap(buf) < need {
		buf = make([]byte, 0, need+need/4)
	}
	buf = buf[:0]
	var out []chunk
	var offs []int // where each chunk's payload starts in buf
	open := -1     // index in evs of the open chunk's first event
	end := func(i int) {
		buf = append(buf, ']')
		c := &out[len(out)-1]
		c.lastSeq, c.n = evs[i-1].Seq, i-open
		open = -1
	}
	for i := range evs {
		if open >= 0 && (!sameRun(&evs[open], &evs[i]) || evs[i].Seq != evs[i-1].Seq+1 || i-open >= chunkMaxEvents ||
			len(buf)-offs[len(offs)-1]+eventSize(&evs[i]) > chunkMaxBytes) {
			end(i)
		}
		if open < 0 {
			open = i
			out = append(out, chunk{head: &evs[i], firstSeq: evs[i].Seq})
			offs = append(offs, len(buf))
			buf = append(buf, '[')
		} else {
			buf = append(buf, ',')
		}
		buf = appendEventJSON(buf, &evs[open], &evs[i])
	}
	if open >= 0 {
		end(len(evs))
	}
	offs = append(offs, len(buf))
	for i := range out {
		out[i].payload = buf[offs[i]:offs[i+1]:offs[i+1]]
	}
	return out, buf
}

// eventSize is at least how many payload bytes e takes, with the brackets
// and comma around it: its largest form has all of "t", "g" and "e".
func eventSize(e *Event) int {
	return 160 + 2*len(e.GTID) + len(e.PK) + len(e.PKBefore) + len(e.Before) + len(e.After)
}

// appendEventJSON appends e's object; head is its chunk's first event.
func appendEventJSON(b []byte, head, e *Event) []byte {
	b = append(b, `{"s":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	if !e.CommitTime.Equal(head.CommitTime) {
		b = append(b, `,"t":"`...)
		b = appendDatetimeText(b, e.CommitTime)
		b = append(b, '"')
	}
	if e.GTID != head.GTID {
		b = append(b, `,"g":`...)
		b = strconv.AppendQuote(b, e.GTID)
	}
	if e.EndPos != head.EndPos {
		b = append(b, `,"e":`...)
		b = strconv.AppendUint(b, e.EndPos, 10)
	}
	b = append(b, `,"o":"`...)
	b = append(b, byte(e.Op))
	b = append(b, `","k":`...)
	b = append(b, e.PK...)
	if e.PKBefore != "" {
		b = append(b, `,"kb":`...)
		b = append(b, e.PKBefore...)
	}
	if e.Before != nil {
		b = append(b, `,"b":`...)
		b = append(b, e.Before...)
	}
	if e.After != nil {
		b = append(b, `,"a":`...)
		b = append(b, e.After...)
	}
	return append(b, '}')
}

// chunkHead is the header of a stored chunk, as read back.
type chunkHead struct {
	Source     string
	FirstSeq   uint64
	CommitTime time.Time
	BinlogFile string
	EndPos     uint64
	GTID       string
	Schema     string
	Table      string
	Version    uint32
}

// unpackChunk calls fn with each event of a stored chunk, in seq order. The
// events' images and keys alias payload.
func unpackChunk(h *chunkHead, payload []byte, fn func(*Event) error) error {
	p := chunkParser{b: payload}
	fail := func(err error) error {
		return fmt.Errorf("event chunk of %s.%s at seq %d: byte %d: %w", h.Schema, h.Table, h.FirstSeq, p.i, err)
	}
	if err := p.expect('['); err != nil {
		return fail(err)
	}
	for first := true; ; first = false {
		if p.peek() == ']' && first {
			p.i++
			break
		}
		e := Event{CommitTime: h.CommitTime, BinlogFile: h.BinlogFile, EndPos: h.EndPos, GTID: h.GTID,
			Schema: h.Schema, Table: h.Table, SchemaVersion: h.Version}
		if err := p.event(&e); err != nil {
			return fail(err)
		}
		if err := fn(&e); err != nil {
			return err
		}
		c := p.peek()
		p.i++
		if c == ']' {
			break
		}
		if c != ',' {
			return fail(fmt.Errorf("want , or ] after an event, found %q", c))
		}
	}
	if p.i != len(p.b) {
		return fail(fmt.Errorf("%d bytes after the array", len(p.b)-p.i))
	}
	return nil
}

// chunkParser reads the payload format appendEventJSON writes. It is strict
// about that format (no white space) but skips values by JSON's rules.
type chunkParser struct {
	b []byte
	i int
}

func (p *chunkParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *chunkParser) expect(c byte) error {
	if p.peek() != c {
		return fmt.Errorf("want %q, found %q", c, p.peek())
	}
	p.i++
	return nil
}

// event reads one {...} object into e.
func (p *chunkParser) event(e *Event) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	seen := false
	for {
		key, err := p.key()
		if err != nil {
			return err
		}
		start := p.i
		end, err := skipValue(p.b, p.i)
		if err != nil {
			return fmt.Errorf("value of %q: %w", key, err)
		}
		p.i = end
		if err := setField(e, key, p.b[start:end]); err != nil {
			return err
		}
		seen = seen || key == "s"
		c := p.peek()
		p.i++
		if c == '}' {
			break
		}
		if c != ',' {
			return fmt.Errorf("want , or } in an event, found %q", c)
		}
	}
	if !seen || e.Op == 0 || e.PK == "" {
		return fmt.Errorf("event object lacks s, o or k")
	}
	return nil
}

// key reads `"name":`.
func (p *chunkParser) key() (string, error) {
	if err := p.expect('"'); err != nil {
		return "", err
	}
	end := bytes.IndexByte(p.b[p.i:], '"')
	if end < 0 || p.i+end+1 >= len(p.b) || p.b[p.i+end+1] != ':' {
		return "", fmt.Errorf("malformed key")
	}
	k := string(p.b[p.i : p.i+end])
	p.i += end + 2
	return k, nil
}

func setField(e *Event, key string, v []byte) error {
	var err error
	switch key {
	case "s":
		e.Seq, err = strconv.ParseUint(string(v), 10, 64)
	case "e":
		e.EndPos, err = strconv.ParseUint(string(v), 10, 64)
	case "t":
		e.CommitTime, err = time.Parse(datetimeLayout, unquoteSimple(v))
	case "g":
		e.GTID, err = strconv.Unquote(string(v))
	case "o":
		if s := unquoteSimple(v); len(s) == 1 && Op(s[0]).Valid() {
			e.Op = Op(s[0])
		} else {
			err = fmt.Errorf("invalid op %s", v)
		}
	case "k":
		e.PK = string(v)
	case "kb":
		e.PKBefore = string(v)
	case "b":
		e.Before = v
	case "a":
		e.After = v
	default:
		err = fmt.Errorf("unknown key %q", key)
	}
	if err != nil {
		return fmt.Errorf("event field %q: %w", key, err)
	}
	return nil
}

// unquoteSimple strips the quotes of a JSON string with no escapes; anything
// else comes back as "" (which the callers reject).
func unquoteSimple(v []byte) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return ""
	}
	return string(v[1 : len(v)-1])
}

// skipValue returns the index just past the JSON value starting at b[i]:
// a string, an object or array (nested values skipped by the same rules), or
// a bare literal (number, true, false, null).
func skipValue(b []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			k, err := skipString(b, j)
			if err != nil {
				return 0, err
			}
			j = k - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				if j == i {
					return 0, fmt.Errorf("empty value")
				}
				return j, nil // end of a bare literal
			}
			depth--
		case ',':
			if depth == 0 {
				if j == i {
					return 0, fmt.Errorf("empty value")
				}
				return j, nil
			}
		}
		if depth == 0 && (b[j] == '"' || b[j] == '}' || b[j] == ']') {
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("value runs past the end")
}

// skipString returns the index just past the string starting at b[i] ('"').
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string")
}

const datetimeLayout = "2006-01-02 15:04:05.000000"
