package index

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

// The index stores events packed: one row of event_chunks holds events of
// one table from one capture batch (packed per table, not per run of
// consecutive events, so interleaved multi-table transactions still make
// large chunks), so capture inserts one InnoDB row per table and batch
// instead of one per event. The view `events` unpacks them again with
// JSON_TABLE, one row per event, for plain SQL.
//
// A chunk's header columns are those of its first event. Its column_names
// column is the JSON array of the names of its images' columns, in column
// order; its `events` column a JSON array with one object per event, keys in
// this order:
//
//	{"s":seq,"t":µs,"g":"gtid","e":end_pos,"o":"op","k":key,"kb":old key,"b":[before],"a":[after]}
//
// "t", "g" and "e" are present only when they differ from the chunk's
// header; "t" is then the event's commit time minus the header's, in
// microseconds (negative when the source's clock went back). "kb", "b" and
// "a" only when the event has them. "k" and "kb" are the canonical key text
// (a JSON array); "b" and "a" the images' values in column order, each the
// JSON text of the image, not re-encoded (an update's before image that
// names other columns than its after image stays a JSON object).
//
// Chunks written before column_names existed (it is NULL) have images as
// JSON objects and "t" as a "YYYY-MM-DD hh:mm:ss.ffffff" string; readers
// take both.
//
// Invariants the readers rely on:
//   - every seq of a source is in at most one chunk, and the seqs inside a
//     chunk grow;
//   - chunks of one table never overlap in seq: a chunk of table T holds
//     every event of T with a seq from its first to its last (a hole in a
//     pack's seqs ends its chunks). Chunks of different tables interleave;
//   - a chunk spans fewer than chunkMaxSpan seqs (last_seq - first_seq), so
//     the chunks that may hold a seq s are those with first_seq in
//     (s - chunkMaxSpan, s]: readers bound their range scans with it;
//   - a chunk holds one table, one schema version, one column list, one hour
//     (partition) and one binlog file;
//   - an event whose end position is not known yet (0, a streamed
//     transaction) is only in a chunk whose events all have it unknown, and
//     never carries its own "e": SetEndPos fixes the header alone.

// Bounds of one chunk. Larger chunks mean fewer rows to insert; smaller ones
// less to read for a window that starts inside one. A chunk of at most
// chunkMaxBytes fits one INSERT within targetStmtBytes.
const (
	chunkMaxEvents = 1000
	chunkMaxBytes  = 250 << 10
	chunkMaxSpan   = 8192
)

// chunk is one event_chunks row before it is stored.
type chunk struct {
	head     *change.Event // the first event: header columns
	firstSeq uint64
	lastSeq  uint64
	n        int
	columns  []byte // column_names: JSON array of the images' column names
	payload  []byte // the JSON array of events
}

// chunkKey is what the events of one chunk share.
type chunkKey struct {
	schema, table string
	version       uint32
	file          string
	hour          uint32
	unknownEnd    bool
	columns       string
}

// packing is PackEvents' work area: the images in stored form, and which
// events go to which chunk.
type packing struct {
	evs     []change.Event
	block   []byte      // the free rest of the block stored images are carved from
	images  [][2][]byte // per event: stored before and after
	columns []string    // per event: its column list (interned)
	intern  map[string]string
	names   [2][]byte   // scratch: the names of an event's after and before images
	values  [2][][]byte // scratch of deltaImage
	members [][]int     // per chunk: its events, in seq order
	bytes   []int       // per chunk: payload bytes so far (an upper bound)
}

// alloc returns an empty slice with room for n bytes that no other slice
// of p's shares.
func (p *packing) alloc(n int) []byte {
	if cap(p.block)-len(p.block) < n {
		p.block = make([]byte, 0, max(n, 256<<10))
	}
	out := p.block[len(p.block) : len(p.block) : len(p.block)+n]
	p.block = p.block[:len(p.block)+n]
	return out
}

// packChunks splits evs (seq order, all checked) into chunks, one table's
// events of evs at a time. The payloads share one buffer, buf's storage
// reused (the grown buffer is returned).
func packChunks(buf []byte, evs []change.Event) ([]chunk, []byte, error) {
	p := &packing{evs: evs, intern: map[string]string{}}
	if err := p.storeImages(); err != nil {
		return nil, buf, err
	}
	out := p.assign()
	need := 0
	for i := range out {
		need += len(out[i].columns) + 2
		for _, m := range p.members[i] {
			need += eventSize(&evs[m]) + 2
		}
	}
	if cap(buf) < need {
		buf = make([]byte, 0, need+need/4)
	}
	buf = buf[:0]
	for i := range out {
		c := &out[i]
		start := len(buf)
		buf = append(buf, c.columns...)
		c.columns = buf[start:len(buf):len(buf)]
		start = len(buf)
		buf = append(buf, '[')
		for j, m := range p.members[i] {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = p.appendEvent(buf, c.head, m)
		}
		buf = append(buf, ']')
		c.payload = buf[start:len(buf):len(buf)]
	}
	return out, buf, nil
}

// storeImages puts every image in its stored form (a value array; an
// update's after image as a delta of its before image) and records each
// event's column list: Columns when the event gives its images in stored
// form already (as capture does, deltas included),
// otherwise its after image's names, or its before image's for a delete.
// An update whose before image names other columns (never so from capture:
// both images follow one schema version) keeps that image as an object,
// which readers take as it is.
func (p *packing) storeImages() error {
	p.images = make([][2][]byte, len(p.evs))
	p.columns = make([]string, len(p.evs))
	for i := range p.evs {
		e := &p.evs[i]
		b, a := e.Before, e.After
		var cols []byte
		if e.Columns != nil {
			cols = e.Columns
		} else {
			var na, nb []byte
			var err error
			if a != nil {
				if a, na, err = p.split(a, 0); err != nil {
					return fmt.Errorf("event seq %d: after image: %w", e.Seq, err)
				}
			}
			if b != nil {
				if b, nb, err = p.split(b, 1); err != nil {
					return fmt.Errorf("event seq %d: before image: %w", e.Seq, err)
				}
			}
			switch {
			case na == nil:
				cols = nb
			case nb != nil && string(na) != string(nb):
				cols, b = na, e.Before
			default:
				cols = na
			}
		}
		if b != nil && a != nil && b[0] == '[' && e.Columns == nil {
			d, err := deltaImage(p.alloc(len(a)), b, a, &p.values)
			if err != nil {
				return fmt.Errorf("event seq %d: %w", e.Seq, err)
			}
			a = d
		}
		p.images[i] = [2][]byte{b, a}
		c, ok := p.intern[string(cols)]
		if !ok {
			c = string(cols)
			p.intern[c] = c
		}
		p.columns[i] = c
	}
	return nil
}

// split stores the object image img as a value array, returning it and
// its names (in scratch buffer k, valid until the next call with k).
func (p *packing) split(img []byte, k int) (vals, names []byte, err error) {
	// The array is shorter than the object (no names, no colons), so it
	// fits the room allocated.
	vals, p.names[k], err = splitImage(p.alloc(len(img)), p.names[k][:0], img)
	return vals, p.names[k], err
}

// assign puts every event in a chunk: its table's open chunk, unless that
// has another key (then it is closed: one table's chunks never overlap), is
// full or would span chunkMaxSpan seqs. A hole in evs' seqs closes every
// chunk: reindex packs an hour at a time, and the missing seqs may be
// in another hour's chunks of the same table. Chunks come out in order of their
// first seq.
func (p *packing) assign() []chunk {
	var out []chunk
	var keys []chunkKey
	open := map[[2]string]int{}
	for i := range p.evs {
		e := &p.evs[i]
		if i > 0 && e.Seq != p.evs[i-1].Seq+1 {
			clear(open) // a hole: the missing seqs may be another pack's
		}
		k := chunkKey{schema: e.Schema, table: e.Table, version: e.SchemaVersion, file: e.BinlogFile,
			hour: change.HourID(e.CommitTime), unknownEnd: e.EndPos == 0, columns: p.columns[i]}
		size := eventSize(e) + 2
		at, ok := open[[2]string{e.Schema, e.Table}]
		if ok {
			c := &out[at]
			ok = keys[at] == k && c.n < chunkMaxEvents && p.bytes[at]+size <= chunkMaxBytes && e.Seq-c.firstSeq < chunkMaxSpan
		}
		if !ok {
			at = len(out)
			open[[2]string{e.Schema, e.Table}] = at
			out = append(out, chunk{head: e, firstSeq: e.Seq, columns: []byte(p.columns[i])})
			keys = append(keys, k)
			p.members = append(p.members, nil)
			p.bytes = append(p.bytes, len(p.columns[i]))
		}
		c := &out[at]
		c.lastSeq = e.Seq
		c.n++
		p.members[at] = append(p.members[at], i)
		p.bytes[at] += size
	}
	return out
}

// eventSize is at least how many payload bytes e takes, with the brackets
// and comma around it: its largest form has all of "t", "g" and "e".
func eventSize(e *change.Event) int {
	return 160 + 2*len(e.GTID) + len(e.PK) + len(e.PKBefore) + len(e.Before) + len(e.After)
}

// appendEvent appends event i's object; head is its chunk's first event.
func (p *packing) appendEvent(b []byte, head *change.Event, i int) []byte {
	e := &p.evs[i]
	b = append(b, `{"s":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	if d := e.CommitTime.Sub(head.CommitTime).Microseconds(); d != 0 {
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, d, 10)
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
	if img := p.images[i][0]; img != nil {
		b = append(b, `,"b":`...)
		b = append(b, img...)
	}
	if img := p.images[i][1]; img != nil {
		b = append(b, `,"a":`...)
		b = append(b, img...)
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
	// Columns is the chunk's column_names, nil for a chunk written before
	// they existed (its images are objects).
	Columns []byte
}

// unpackChunk calls fn with each event of a stored chunk, in seq order, its
// images as JSON objects. The events' keys alias payload; their images alias
// payload or buffers of this call's, valid as long as payload.
func unpackChunk(h *chunkHead, payload []byte, fn func(*change.Event) error) error {
	p := chunkParser{b: payload, head: h}
	fail := func(err error) error {
		return fmt.Errorf("event chunk of %s.%s at seq %d: byte %d: %w", h.Schema, h.Table, h.FirstSeq, p.i, err)
	}
	if h.Columns != nil {
		names, err := parseColumnNames(h.Columns)
		if err != nil {
			return fmt.Errorf("event chunk of %s.%s at seq %d: %w", h.Schema, h.Table, h.FirstSeq, err)
		}
		p.names, p.arrays = names, true
	}
	if err := p.expect('['); err != nil {
		return fail(err)
	}
	for first := true; ; first = false {
		if p.peek() == ']' && first {
			p.i++
			break
		}
		e := change.Event{CommitTime: h.CommitTime, BinlogFile: h.BinlogFile, EndPos: h.EndPos, GTID: h.GTID,
			Schema: h.Schema, Table: h.Table, SchemaVersion: h.Version}
		p.hasB = false
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
	b      []byte
	i      int
	head   *chunkHead
	arrays bool // images are stored as value arrays (the chunk has column names)
	names  columnNames
	arena  []byte   // object images built from stored value arrays
	before [][]byte // the values of the current event's stored before image
	hasB   bool     // before holds the current event's
	after  [][]byte // scratch: the values of the image being joined
}

// image returns the object form of the stored image v: v itself when it is
// an object (a chunk without column names, or an image whose columns are
// not the chunk's). after says v is an after image (it may hold markers of
// values unchanged from the event's before image, read just before it).
func (p *chunkParser) image(v []byte, after bool) ([]byte, error) {
	if !p.arrays || (len(v) > 0 && v[0] == '{') {
		return v, nil
	}
	// Each stored array is parsed once: a before image's values stay in
	// p.before as the base of the after image that follows.
	vals, base := &p.after, [][]byte(nil)
	if !after {
		vals = &p.before
	} else if p.hasB {
		base = p.before
	}
	var err error
	if *vals, err = arrayValues((*vals)[:0], v); err != nil {
		return nil, err
	}
	p.hasB = p.hasB || !after
	need := len(v) + 2
	for i, n := range p.names {
		need += len(n) + 2
		if i < len(base) {
			need += len(base[i])
		}
	}
	if cap(p.arena)-len(p.arena) < need {
		p.arena = make([]byte, 0, max(need, 64<<10))
	}
	start := len(p.arena)
	out, err := joinImage(p.arena, p.names, *vals, base)
	if err != nil {
		return nil, err
	}
	p.arena = out
	return out[start:len(out):len(out)], nil
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
func (p *chunkParser) event(e *change.Event) error {
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
		if err := p.setField(e, key, p.b[start:end]); err != nil {
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

func (p *chunkParser) setField(e *change.Event, key string, v []byte) error {
	var err error
	switch key {
	case "s":
		e.Seq, err = strconv.ParseUint(string(v), 10, 64)
	case "e":
		e.EndPos, err = strconv.ParseUint(string(v), 10, 64)
	case "t":
		if !p.arrays {
			e.CommitTime, err = time.Parse(datetimeLayout, unquoteSimple(v))
			break
		}
		var us int64
		us, err = strconv.ParseInt(string(v), 10, 64)
		e.CommitTime = p.head.CommitTime.Add(time.Duration(us) * time.Microsecond)
	case "g":
		e.GTID, err = strconv.Unquote(string(v))
	case "o":
		if s := unquoteSimple(v); len(s) == 1 && change.Op(s[0]).Valid() {
			e.Op = change.Op(s[0])
		} else {
			err = fmt.Errorf("invalid op %s", v)
		}
	case "k":
		e.PK = string(v)
	case "kb":
		e.PKBefore = string(v)
	case "b":
		e.Before, err = p.image(v, false)
	case "a":
		e.After, err = p.image(v, true)
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
