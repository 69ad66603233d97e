package archive

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/dbtrail/dbtrail/internal/change"
)

// group buffers the events of one row group, column by column. Byte values
// are copied into arena blocks that are reused from group to group: the
// Parquet writer copies every value it keeps (encoders, statistics) before
// the row group is closed.
type group struct {
	rows, bytes int

	seq, commit, endPos []int64
	version             []int32
	// Byte columns hold only their non-NULL values; the def slices hold one
	// definition level per row (0 NULL, 1 present).
	binlog, gtid, op, pk, pkBefore, before, after []parquet.ByteArray
	gtidDef, pkBeforeDef, beforeDef, afterDef     []int16
	// schema and table are the same for every row: one value, repeated in
	// names when written.
	schema, table parquet.ByteArray
	names         []parquet.ByteArray
	// lastBinlog and lastGTID are the previous row's, shared by the rows of
	// a transaction without a new copy.
	lastBinlog, lastGTID parquet.ByteArray
	ops                  [3]parquet.ByteArray

	arena arena
}

func newGroup(rows int) *group {
	n := min(rows, 4096)
	g := &group{
		seq: make([]int64, 0, n), commit: make([]int64, 0, n), endPos: make([]int64, 0, n), version: make([]int32, 0, n),
		ops: [3]parquet.ByteArray{parquet.ByteArray("i"), parquet.ByteArray("u"), parquet.ByteArray("d")},
	}
	return g
}

// knownText reports whether e's binlog file and GTID are those of the
// previous row (so already checked).
func (g *group) knownText(e *change.Event) bool {
	return g.rows > 0 && string(g.lastBinlog) == e.BinlogFile && string(g.lastGTID) == e.GTID
}

// add appends e, checked by the Writer, as the next row; size is its share of
// the byte bound.
func (g *group) add(e *change.Event, size int) {
	if g.rows == 0 {
		g.schema = []byte(e.Schema) // not in the arena: statistics are taken from it
		g.table = []byte(e.Table)
		g.lastBinlog, g.lastGTID = nil, nil
	}
	g.seq = append(g.seq, int64(e.Seq))
	g.commit = append(g.commit, e.CommitTime.UnixMicro())
	g.endPos = append(g.endPos, int64(e.EndPos))
	g.version = append(g.version, int32(e.SchemaVersion))
	if g.rows == 0 || string(g.lastBinlog) != e.BinlogFile {
		g.lastBinlog = []byte(e.BinlogFile)
	}
	g.binlog = append(g.binlog, g.lastBinlog)
	if g.rows == 0 || string(g.lastGTID) != e.GTID {
		g.lastGTID = g.arena.copyString(e.GTID)
	}
	g.gtid, g.gtidDef = appendOptional(g.gtid, g.gtidDef, g.lastGTID, e.GTID != "")
	g.op = append(g.op, g.ops[opIndex(e.Op)])
	g.pk = append(g.pk, g.arena.copyString(e.PK))
	g.pkBefore, g.pkBeforeDef = appendOptional(g.pkBefore, g.pkBeforeDef, g.arena.copyString(e.PKBefore), e.PKBefore != "")
	g.before, g.beforeDef = appendOptional(g.before, g.beforeDef, g.arena.copy(e.Before), e.Before != nil)
	g.after, g.afterDef = appendOptional(g.after, g.afterDef, g.arena.copy(e.After), e.After != nil)
	g.rows++
	g.bytes += size
}

// appendOptional appends v to vals when present and its definition level.
func appendOptional(vals []parquet.ByteArray, defs []int16, v parquet.ByteArray, present bool) ([]parquet.ByteArray, []int16) {
	if !present {
		return vals, append(defs, 0)
	}
	if v == nil {
		v = parquet.ByteArray{} // an empty value, not NULL
	}
	return append(vals, v), append(defs, 1)
}

// opIndex maps a valid op to its index in group.ops.
func opIndex(o change.Op) int {
	switch o {
	case change.OpInsert:
		return 0
	case change.OpUpdate:
		return 1
	}
	return 2
}

// reset empties the group for the next row group, keeping its storage.
func (g *group) reset() {
	g.rows, g.bytes = 0, 0
	g.seq, g.commit, g.endPos, g.version = g.seq[:0], g.commit[:0], g.endPos[:0], g.version[:0]
	for _, s := range []*[]parquet.ByteArray{&g.binlog, &g.gtid, &g.op, &g.pk, &g.pkBefore, &g.before, &g.after, &g.names} {
		clear(*s) // drop references to the arena and to names
		*s = (*s)[:0]
	}
	g.gtidDef, g.pkBeforeDef, g.beforeDef, g.afterDef = g.gtidDef[:0], g.pkBeforeDef[:0], g.beforeDef[:0], g.afterDef[:0]
	g.lastBinlog, g.lastGTID = nil, nil
	g.arena.reset()
}

// writeColumn writes column c of the group to cw.
func (g *group) writeColumn(c int, cw file.ColumnChunkWriter) error {
	var err error
	switch c {
	case colSeq:
		err = writeInt64(cw, g.seq)
	case colCommitTime:
		err = writeInt64(cw, g.commit)
	case colEndPos:
		err = writeInt64(cw, g.endPos)
	case colSchemaVersion:
		w, ok := cw.(*file.Int32ColumnChunkWriter)
		if !ok {
			return fmt.Errorf("column writer is %T", cw)
		}
		_, err = w.WriteBatch(g.version, nil, nil)
	case colBinlogFile:
		err = writeBytes(cw, g.binlog, nil)
	case colGTID:
		err = writeBytes(cw, g.gtid, g.gtidDef)
	case colSchema:
		err = writeBytes(cw, g.repeat(g.schema), nil)
	case colTable:
		err = writeBytes(cw, g.repeat(g.table), nil)
	case colOp:
		err = writeBytes(cw, g.op, nil)
	case colPK:
		err = writeBytes(cw, g.pk, nil)
	case colPKBefore:
		err = writeBytes(cw, g.pkBefore, g.pkBeforeDef)
	case colBefore:
		err = writeBytes(cw, g.before, g.beforeDef)
	case colAfter:
		err = writeBytes(cw, g.after, g.afterDef)
	default:
		err = fmt.Errorf("no column %d", c)
	}
	return err
}

// repeat returns v once per row.
func (g *group) repeat(v parquet.ByteArray) []parquet.ByteArray {
	g.names = g.names[:0]
	for range g.rows {
		g.names = append(g.names, v)
	}
	return g.names
}

func writeInt64(cw file.ColumnChunkWriter, vals []int64) error {
	w, ok := cw.(*file.Int64ColumnChunkWriter)
	if !ok {
		return fmt.Errorf("column writer is %T", cw)
	}
	_, err := w.WriteBatch(vals, nil, nil)
	return err
}

// writeBytes writes a byte column; defs is nil for a required column.
func writeBytes(cw file.ColumnChunkWriter, vals []parquet.ByteArray, defs []int16) error {
	w, ok := cw.(*file.ByteArrayColumnChunkWriter)
	if !ok {
		return fmt.Errorf("column writer is %T", cw)
	}
	_, err := w.WriteBatch(vals, defs, nil)
	return err
}

// arenaBlock is the size of an arena block; a larger value gets a block of
// its own.
const arenaBlock = 1 << 20

// arena hands out copies of byte values from large blocks, so a row group
// costs a few allocations instead of one per value. Blocks are kept across
// reset.
type arena struct {
	blocks [][]byte
	cur    int // block being filled
}

// copy returns a copy of b (nil for nil).
func (a *arena) copy(b []byte) parquet.ByteArray {
	if b == nil {
		return nil
	}
	dst := a.alloc(len(b))
	copy(dst, b)
	return dst
}

// copyString returns a copy of s (nil for "").
func (a *arena) copyString(s string) parquet.ByteArray {
	if s == "" {
		return nil
	}
	dst := a.alloc(len(s))
	copy(dst, s)
	return dst
}

// alloc returns n bytes of storage, not zeroed.
func (a *arena) alloc(n int) parquet.ByteArray {
	if n > arenaBlock/4 {
		return make([]byte, n)
	}
	for a.cur < len(a.blocks) && cap(a.blocks[a.cur])-len(a.blocks[a.cur]) < n {
		a.cur++
	}
	if a.cur == len(a.blocks) {
		a.blocks = append(a.blocks, make([]byte, 0, arenaBlock))
	}
	b := a.blocks[a.cur]
	start := len(b)
	b = b[:start+n]
	a.blocks[a.cur] = b
	return b[start : start+n : start+n]
}

// reset makes every block free again.
func (a *arena) reset() {
	for i := range a.blocks {
		a.blocks[i] = a.blocks[i][:0]
	}
	a.cur = 0
}
