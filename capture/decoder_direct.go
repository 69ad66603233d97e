package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// directRows converts the rows of e, a rows event that decodes directly
// (directEvent), from its body b into index events, one per row image.
// rt's columns are e's, in order.
func (d *decoder) directRows(rt *resolvedTable, e *replication.RowsEvent, h *replication.EventHeader, b rowsBody) error {
	op := change.OpInsert
	switch e.Type() {
	case replication.EnumRowsEventTypeDelete:
		op = change.OpDelete
	case replication.EnumRowsEventTypeUpdate:
		op = change.OpUpdate
	}
	data := b.data
	for pos, row := b.pos, 0; pos < len(data); row++ {
		first := &d.images[0]
		n, err := decodeImage(first, rt.def, e.Table, data, pos)
		if err != nil {
			return fmt.Errorf("row %d at %s: %w", row, d.here(h), err)
		}
		pos += n
		switch op {
		case change.OpInsert:
			err = d.emitImages(rt, e.Table, op, nil, first)
		case change.OpDelete:
			err = d.emitImages(rt, e.Table, op, first, nil)
		default:
			second := &d.images[1]
			if n, err = decodeImage(second, rt.def, e.Table, data, pos); err != nil {
				return fmt.Errorf("after image of row %d at %s: %w", row, d.here(h), err)
			}
			pos += n
			err = d.emitImages(rt, e.Table, op, first, second)
		}
		if err != nil {
			return fmt.Errorf("row %d at %s: %w", row, d.here(h), err)
		}
	}
	return nil
}

// emitImages is emit for decoded row images: an update's after image
// stores rowimage.Unchanged for a value equal to its before image's whose
// text is longer (as rowimage.AppendValuesDelta does for go-mysql's values).
func (d *decoder) emitImages(rt *resolvedTable, tm *replication.TableMapEvent, op change.Op, before, after *rowImage) error {
	ev := d.event(rt, op)
	var err error
	key := after
	if before != nil {
		ev.Before = d.carve(before.text)
		key = before
	}
	if after != nil {
		text := after.text
		if before != nil {
			text = d.delta(tm, before, after)
		}
		ev.After = d.carve(text)
		key = after
	}
	if ev.PK, err = rt.key(key); err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if op == change.OpUpdate {
		old, err := rt.key(before)
		if err != nil {
			return fmt.Errorf("key of before image: %w", err)
		}
		if old != ev.PK {
			ev.PKBefore = old
		}
	}
	return d.push(ev)
}

// delta is after's text with rowimage.Unchanged for each value that equals
// before's (sameRaw) and is longer than it, in d.scratch.
func (d *decoder) delta(tm *replication.TableMapEvent, before, after *rowImage) []byte {
	out := append(d.scratch[:0], '[')
	for j := range after.values {
		if j > 0 {
			out = append(out, ',')
		}
		v := after.value(j)
		if len(v) > len(rowimage.Unchanged) && sameRaw(tm.ColumnType[j], tm.ColumnMeta[j], before.rawValue(j), after.rawValue(j)) {
			out = append(out, rowimage.Unchanged...)
		} else {
			out = append(out, v...)
		}
	}
	out = append(out, ']')
	if cap(out) <= arenaBlock {
		d.scratch = out[:0]
	}
	return out
}

// sameRaw reports whether two binlog values of type tp and meta (nil for
// NULL) decode to values that rowimage's sameValue takes as equal: equal
// bytes; for FLOAT and DOUBLE equal numbers (0 and -0); for DECIMAL and
// the fractional temporal types (DATETIME2, TIMESTAMP2, TIME2) equal
// go-mysql text (a fraction's digits beyond the FSP are not in it).
func sameRaw(tp byte, meta uint16, a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch {
	case tp == mysql.MYSQL_TYPE_DATETIME2 || tp == mysql.MYSQL_TYPE_TIMESTAMP2 || tp == mysql.MYSQL_TYPE_TIME2:
		if bytes.Equal(a, b) {
			return true
		}
		var x, y [32]byte
		return bytes.Equal(fracTemporalText(x[:0], tp, a, int(meta)), fracTemporalText(y[:0], tp, b, int(meta)))
	case tp == mysql.MYSQL_TYPE_NEWDECIMAL:
		var x, y [80]byte
		ta, _, errA := decimalText(x[:0], a, int(meta>>8), int(meta&0xFF))
		tb, _, errB := decimalText(y[:0], b, int(meta>>8), int(meta&0xFF))
		return errA == nil && errB == nil && bytes.Equal(ta, tb)
	case tp == mysql.MYSQL_TYPE_FLOAT && len(a) == 4 && len(b) == 4:
		return math.Float32frombits(binary.LittleEndian.Uint32(a)) == math.Float32frombits(binary.LittleEndian.Uint32(b))
	case tp == mysql.MYSQL_TYPE_DOUBLE && len(a) == 8 && len(b) == 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(a)) == math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return bytes.Equal(a, b)
}

// fracTemporalText is go-mysql's text of a DATETIME2, TIMESTAMP2 or TIME2
// value b of type tp and dec fraction digits.
func fracTemporalText(dst []byte, tp byte, b []byte, dec int) []byte {
	switch tp {
	case mysql.MYSQL_TYPE_TIMESTAMP2:
		return timestamp2Text(dst, b, dec)
	case mysql.MYSQL_TYPE_TIME2:
		return time2Text(dst, b, dec)
	}
	return datetime2Text(dst, b, dec)
}

// key is img's key (rowimage.KeyOfValues), by rt's key columns found once.
func (rt *resolvedTable) key(img *rowImage) (string, error) {
	if rt.keys == nil {
		return rowimage.KeyOfValues(rt.def, img.value)
	}
	return rowimage.KeyOfValuesAt(rt.def, rt.keys, img.value)
}
