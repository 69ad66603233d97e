package index

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/dbtrail/dbtrail/internal/change"
)

const insertChunksHead = "INSERT INTO event_chunks (source,first_seq,last_seq,hour_id,commit_ts,binlog_file,end_pos,gtid," +
	"schema_name,table_name,schema_version,n,column_names,events) VALUES "

// chunkCols is the number of columns of insertChunksHead.
const chunkCols = 14

// appendDatetimeText appends t (taken in UTC) as "YYYY-MM-DD hh:mm:ss.ffffff".
func appendDatetimeText(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, int(mo), 2)
	b = append(b, '-')
	b = appendPadded(b, d, 2)
	b = append(b, ' ')
	b = appendPadded(b, h, 2)
	b = append(b, ':')
	b = appendPadded(b, mi, 2)
	b = append(b, ':')
	b = appendPadded(b, s, 2)
	b = append(b, '.')
	return appendPadded(b, t.Nanosecond()/1000, 6)
}

func appendPadded(b []byte, v, width int) []byte {
	var tmp [8]byte
	i := len(tmp)
	for ; width > 0 || v > 0; width-- {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, tmp[i:]...)
}

// checkEvent validates what the database would not: op and image presence,
// and what the chunk payload relies on (a key is a JSON array, an image a JSON
// object, both valid UTF-8).
func checkEvent(e *change.Event) error {
	if e.CommitTime.IsZero() || e.CommitTime.Year() < 1970 || e.CommitTime.Year() > 9999 {
		return fmt.Errorf("event seq %d: commit time %v out of range", e.Seq, e.CommitTime)
	}
	switch e.Op {
	case change.OpInsert:
		if e.Before != nil || e.After == nil {
			return fmt.Errorf("event seq %d: insert needs an after image and no before image", e.Seq)
		}
	case change.OpUpdate:
		if e.Before == nil || e.After == nil {
			return fmt.Errorf("event seq %d: update needs both images", e.Seq)
		}
	case change.OpDelete:
		if e.Before == nil || e.After != nil {
			return fmt.Errorf("event seq %d: delete needs a before image and no after image", e.Seq)
		}
	default:
		return fmt.Errorf("event seq %d: invalid op %q", e.Seq, byte(e.Op))
	}
	if !enclosed(e.PK, '[', ']') || (e.PKBefore != "" && !enclosed(e.PKBefore, '[', ']')) {
		return fmt.Errorf("event seq %d: key %q is not a JSON array", e.Seq, e.PK)
	}
	open, close, form := byte('{'), byte('}'), "a JSON object"
	if e.Columns != nil {
		open, close, form = '[', ']', "a JSON array (the event gives Columns)"
		if !enclosed(e.Columns, '[', ']') || !utf8.Valid(e.Columns) {
			return fmt.Errorf("event seq %d: columns %q are not a JSON array", e.Seq, e.Columns)
		}
	}
	if (e.Before != nil && !enclosed(e.Before, open, close)) || (e.After != nil && !enclosed(e.After, open, close)) {
		return fmt.Errorf("event seq %d: an image is not %s", e.Seq, form)
	}
	if !utf8.ValidString(e.PK) || !utf8.ValidString(e.PKBefore) || !utf8.Valid(e.Before) || !utf8.Valid(e.After) {
		return fmt.Errorf("event seq %d: key or image is not valid UTF-8", e.Seq)
	}
	return nil
}

func enclosed[T string | []byte](s T, open, close byte) bool {
	return len(s) >= 2 && s[0] == open && s[len(s)-1] == close
}

// insertLadder are the row counts of the prepared multi-row INSERTs of
// chunks; any count is a sum of them.
var insertLadder = [...]int{16, 4, 1}

// chunkRowBytes bounds what a chunk row adds to an INSERT packet besides its
// payload: the other columns and their encoding.
const chunkRowBytes = 400

// stmtBytes bounds the packet of an INSERT of cs.
func stmtBytes(cs []chunk) int {
	size := len(insertChunksHead)
	for i := range cs {
		size += len(cs[i].payload) + len(cs[i].columns) + chunkRowBytes
	}
	return size
}

// nextStmt returns how many of cs go into the next statement: the largest
// ladder size whose chunks fit in maxStmt bytes (by stmtBytes), at least one.
func nextStmt(cs []chunk, maxStmt int) int {
	size, n := len(insertChunksHead), 0
	for n < len(cs) && n < insertLadder[0] {
		sz := len(cs[n].payload) + len(cs[n].columns) + chunkRowBytes
		if n > 0 && size+sz > maxStmt {
			break
		}
		size += sz
		n++
	}
	for _, l := range insertLadder {
		if n >= l {
			return l
		}
	}
	return 1
}

// insertPlaceholders returns the prepared INSERT text of n chunk rows.
func insertPlaceholders(n int) string {
	const row = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
	b := make([]byte, 0, len(insertChunksHead)+n*(len(row)+1))
	b = append(b, insertChunksHead...)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, row...)
	}
	return string(b)
}

// appendChunkArgs appends the chunkCols arguments of c's row, in
// insertChunksHead order. NULL is an untyped nil.
func appendChunkArgs(args []any, source string, c *chunk) []any {
	h := c.head
	var gtid any
	if h.GTID != "" {
		gtid = h.GTID
	}
	return append(args, source, c.firstSeq, c.lastSeq, uint64(change.HourID(h.CommitTime)), h.CommitTime.UTC(), h.BinlogFile,
		h.EndPos, gtid, h.Schema, h.Table, uint64(h.SchemaVersion), uint64(c.n), c.columns, c.payload)
}
