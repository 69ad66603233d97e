package index

import (
	"fmt"
	"strconv"
	"time"
)

// The insert builder writes multi-row INSERT text itself: one COM_QUERY per
// ~4 MiB, no prepare round trips, no per-value interface boxing. Literals are
// escaped with backslashes like mysql_real_escape_string, which is correct
// because every index connection runs with a sql_mode that has no
// NO_BACKSLASH_ESCAPES (see sessionSQLMode).

const insertEventsHead = "INSERT INTO events (source,seq,commit_ts,hour_id,binlog_file,end_pos,gtid," +
	"schema_name,table_name,op,pk,pk_before,schema_version,before_image,after_image) VALUES "

// appendEscaped appends s quoted as a string literal: 'text'. binary prefixes
// the _binary introducer, so bytes that are not UTF-8 reach a VARBINARY column
// unchanged.
func appendEscaped[T string | []byte](b []byte, s T, binary bool) []byte {
	if binary {
		b = append(b, "_binary'"...)
	} else {
		b = append(b, '\'')
	}
	start := 0
	for i := 0; i < len(s); i++ {
		var esc byte
		switch s[i] {
		case 0:
			esc = '0'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		case '\\':
			esc = '\\'
		case '\'':
			esc = '\''
		case '"':
			esc = '"'
		case '\032':
			esc = 'Z'
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\', esc)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '\'')
}

// appendDatetime appends t (taken in UTC) as a DATETIME(6) literal.
func appendDatetime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	us := t.Nanosecond() / 1000
	b = append(b, '\'')
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
	b = appendPadded(b, us, 6)
	return append(b, '\'')
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

// checkEvent validates what the database would not: op and image presence.
func checkEvent(e *Event) error {
	if e.CommitTime.IsZero() || e.CommitTime.Year() < 1970 || e.CommitTime.Year() > 9999 {
		return fmt.Errorf("event seq %d: commit time %v out of range", e.Seq, e.CommitTime)
	}
	switch e.Op {
	case OpInsert:
		if e.Before != nil || e.After == nil {
			return fmt.Errorf("event seq %d: insert needs an after image and no before image", e.Seq)
		}
	case OpUpdate:
		if e.Before == nil || e.After == nil {
			return fmt.Errorf("event seq %d: update needs both images", e.Seq)
		}
	case OpDelete:
		if e.Before == nil || e.After != nil {
			return fmt.Errorf("event seq %d: delete needs a before image and no after image", e.Seq)
		}
	default:
		return fmt.Errorf("event seq %d: invalid op %q", e.Seq, byte(e.Op))
	}
	return nil
}

// appendEventRow appends the VALUES tuple of e for source (already escaped as
// a literal in srcLit).
func appendEventRow(b []byte, srcLit []byte, e *Event) []byte {
	b = append(b, '(')
	b = append(b, srcLit...)
	b = append(b, ',')
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, ',')
	b = appendDatetime(b, e.CommitTime)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(HourID(e.CommitTime)), 10)
	b = append(b, ',')
	b = appendEscaped(b, e.BinlogFile, false)
	b = append(b, ',')
	b = strconv.AppendUint(b, e.EndPos, 10)
	b = append(b, ',')
	if e.GTID == "" {
		b = append(b, "NULL"...)
	} else {
		b = appendEscaped(b, e.GTID, false)
	}
	b = append(b, ',')
	b = appendEscaped(b, e.Schema, false)
	b = append(b, ',')
	b = appendEscaped(b, e.Table, false)
	b = append(b, ",'"...)
	b = append(b, byte(e.Op))
	b = append(b, "',"...)
	b = appendEscaped(b, e.PK, true)
	b = append(b, ',')
	if e.PKBefore == "" {
		b = append(b, "NULL"...)
	} else {
		b = appendEscaped(b, e.PKBefore, true)
	}
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(e.SchemaVersion), 10)
	b = append(b, ',')
	b = appendImage(b, e.Before)
	b = append(b, ',')
	b = appendImage(b, e.After)
	return append(b, ')')
}

func appendImage(b []byte, img []byte) []byte {
	if img == nil {
		return append(b, "NULL"...)
	}
	return appendEscaped(b, img, false)
}

// eventRowSize is an upper bound of len(appendEventRow(...)) - len(srcLit).
func eventRowSize(e *Event) int {
	return 160 + 2*(len(e.BinlogFile)+len(e.GTID)+len(e.Schema)+len(e.Table)+len(e.PK)+len(e.PKBefore)+len(e.Before)+len(e.After))
}

// insertLadder are the row counts of the prepared multi-row INSERTs; a run
// shorter than the smallest goes as one built text INSERT instead.
var insertLadder = [...]int{256, 32}

// nextChunk returns how many of evs go into the next statement: as many as fit
// in maxStmt bytes, at most insertLadder[0] and at least one. prepared says the
// count is a ladder size (use the prepared statement of that many rows);
// otherwise the run goes as built text.
func nextChunk(evs []Event, maxStmt int) (n int, prepared bool) {
	size := len(insertEventsHead)
	for n < len(evs) && n < insertLadder[0] {
		sz := eventRowSize(&evs[n]) + 70 // + the escaped source
		if n > 0 && size+sz > maxStmt {
			break
		}
		size += sz
		n++
	}
	for _, l := range insertLadder {
		if n >= l {
			return l, true
		}
	}
	return n, false
}

// buildInsert appends the text INSERT of evs (all of source) to buf[:0].
func buildInsert(buf []byte, source string, evs []Event) []byte {
	buf = append(buf[:0], insertEventsHead...)
	srcLit := appendEscaped(nil, source, false)
	for i := range evs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendEventRow(buf, srcLit, &evs[i])
	}
	return buf
}

// insertPlaceholders returns the prepared INSERT text of n rows.
func insertPlaceholders(n int) string {
	const row = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
	b := make([]byte, 0, len(insertEventsHead)+n*(len(row)+1))
	b = append(b, insertEventsHead...)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, row...)
	}
	return string(b)
}

// appendEventArgs appends the 15 arguments of e's row, in insertEventsHead
// order. NULLs are untyped nil or []byte(nil), which the driver sends as NULL.
func appendEventArgs(args []any, source string, e *Event) []any {
	var gtid, pkBefore any
	if e.GTID != "" {
		gtid = e.GTID
	}
	if e.PKBefore != "" {
		pkBefore = e.PKBefore
	}
	return append(args, source, e.Seq, e.CommitTime.UTC(), uint64(HourID(e.CommitTime)), e.BinlogFile, e.EndPos,
		gtid, e.Schema, e.Table, e.Op.String(), e.PK, pkBefore, uint64(e.SchemaVersion), e.Before, e.After)
}
