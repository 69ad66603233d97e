package capture

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// batch is one unit of work handed from the decoder to the writer. The
// writer keeps one index transaction open across batches until a batch with
// a checkpoint arrives, so a binlog transaction is never half-committed to
// the index, however many batches it spans.
type batch struct {
	// raw are the batch's events as the decoder cut them, at binlog
	// position cutAt; the packer packs them into events (and frees raw)
	// before the writer sees the batch.
	raw   []change.Event
	cutAt binlogpos.Position
	// events are raw packed for the index.
	events  *index.Packed
	schemas []change.SchemaVersion
	// fill, when set, gives the end position to the earlier, streamed parts
	// of a large transaction that this batch completes.
	fill *endPosFill
	// checkpoint, when set, ends the index transaction: it is the position
	// just after the last complete binlog transaction in this batch.
	checkpoint *change.Checkpoint
}

type endPosFill struct {
	fromSeq, toSeq uint64
	file           string
	endPos         uint64
}

// openTx is the binlog transaction being read.
type openTx struct {
	active     bool
	gtid       string
	commitTime time.Time
	firstSeq   uint64 // first seq of the transaction, 0 until its first row
	startIdx   int    // where its events start in decoder.pending
	streamed   bool   // part of it was already handed to the writer
	standalone bool   // MariaDB FL_STANDALONE: the next statement commits it
}

// decoder turns binlog events into index events in stream order. It is
// single-goroutine state: only the read loop touches it.
type decoder struct {
	source  string
	flavor  string
	log     *slog.Logger
	limits  batchLimits
	tables  *tableTracker
	out     func(*batch) error // hands a batch to the packer
	packer  *packer            // recycles the event lists of packed batches
	arena   []byte             // where images are carved from (see image)
	scratch []byte             // where image encodes before it is carved
	// body, when set, takes the undecoded body of a rows event that
	// decodes directly (rowDecoder.take); images are its work area.
	body     func(*replication.RowsEvent) (rowsBody, bool)
	images   [2]rowImage
	unsigned replication.TableMapEvent

	pos     binlogpos.Position // end of the last event read
	lastSeq uint64
	gtidSet gtidTracker
	tx      openTx

	pending      []change.Event
	pendingBytes int
	schemas      []change.SchemaVersion
	committed    int // pending[:committed] belong to complete transactions
	checkpoint   *change.Checkpoint
	firstPending time.Time
	lastCommit   time.Time
	received     func(n int)
	// unreported are the events pushed since received was last told: it
	// is told once per rows event, not per row (a counter's Add per row
	// cost as much as a tenth of a row's key).
	unreported int
	// last is the newest checkpoint handed to the writer (or loaded at
	// start): moveIdleCheckpoint compares the read position with it.
	last change.Checkpoint
}

type batchLimits struct {
	rows     int
	bytes    int
	interval time.Duration
}

// handle processes one binlog event. Errors are fatal to capture: they name
// the table and binlog position involved.
func (d *decoder) handle(ev *replication.BinlogEvent) error {
	h := ev.Header
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		d.pos = binlogpos.Position{File: string(e.NextLogName), Pos: e.Position}
		return nil
	case *replication.TransactionPayloadEvent:
		for _, inner := range e.Events {
			if err := d.handle(inner); err != nil {
				return err
			}
		}
		return d.advance(h)
	case *replication.GTIDEvent:
		d.beginTx(mysqlGTID(e), commitTimeOf(e, h))
	case *replication.MariadbGTIDEvent:
		gtid := fmt.Sprintf("%d-%d-%d", e.GTID.DomainID, h.ServerID, e.GTID.SequenceNumber)
		d.beginTx(gtid, time.Unix(int64(h.Timestamp), 0).UTC())
		d.tx.standalone = e.IsStandalone()
	case *replication.QueryEvent:
		return d.query(e, h)
	case *replication.XIDEvent:
		return d.commit(h)
	case *replication.HeartbeatEvent:
		// Its position is the source's, not an event read: no advance.
		return nil
	case *replication.FormatDescriptionEvent:
		// It describes the file, and moves nothing: at a stream's start
		// MariaDB re-sends it with end_log_pos 0, which FillZeroLogPos
		// turns into the start position plus its size, a position no
		// event ends at (past the file's end on an idle source: the idle
		// checkpoint and a refresh's cut would be set after later events,
		// and a restart would resume inside one).
		return nil
	case *replication.TableMapEvent:
		if _, err := d.tables.resolve(e, d.here(h), d.lastSeq); err != nil {
			return err
		}
		d.schemas = append(d.schemas, d.tables.takeVersions()...)
	case *replication.RowsEvent:
		err := d.rows(e, h)
		if d.unreported > 0 {
			d.received(d.unreported)
			d.unreported = 0
		}
		if err != nil {
			return err
		}
		d.schemas = append(d.schemas, d.tables.takeVersions()...)
	}
	return d.advance(h)
}

// advance records the end of an event that does not end a transaction. An
// event outside a transaction with a real position moves the resume point
// only through the next checkpoint, which is written at commits.
func (d *decoder) advance(h *replication.EventHeader) error {
	if h.LogPos != 0 {
		d.pos.Pos = uint64(h.LogPos)
	}
	return nil
}

func (d *decoder) here(h *replication.EventHeader) binlogpos.Position {
	return binlogpos.Position{File: d.pos.File, Pos: uint64(h.LogPos)}
}

func (d *decoder) beginTx(gtid string, commit time.Time) {
	d.tx = openTx{active: true, gtid: gtid, commitTime: commit, startIdx: len(d.pending)}
}

func (d *decoder) query(e *replication.QueryEvent, h *replication.EventHeader) error {
	q := strings.TrimSpace(string(e.Query))
	switch upper := strings.ToUpper(q); {
	case upper == "BEGIN" || strings.HasPrefix(upper, "XA START"):
		if !d.tx.active {
			d.beginTx("", time.Unix(int64(h.Timestamp), 0).UTC())
		}
		d.tx.standalone = false
		return d.advance(h)
	case upper == "COMMIT" || upper == "ROLLBACK" || strings.HasPrefix(upper, "XA "):
		return d.commit(h)
	}
	if !d.tx.active {
		d.beginTx("", time.Unix(int64(h.Timestamp), 0).UTC())
	}
	vers, err := d.tables.applyDDL(string(e.Schema), q, d.here(h), d.lastSeq)
	if err != nil {
		return err
	}
	d.schemas = append(d.schemas, vers...)
	// DDL commits implicitly; a MariaDB standalone statement is its own group.
	return d.commit(h)
}

// rows converts a rows event into index events, one per row image.
func (d *decoder) rows(e *replication.RowsEvent, h *replication.EventHeader) error {
	var body rowsBody
	direct := false
	if d.body != nil {
		body, direct = d.body(e)
	}
	if !d.tx.active {
		d.beginTx("", time.Unix(int64(h.Timestamp), 0).UTC())
	}
	rt, err := d.tables.forRows(e.Table, d.here(h), d.lastSeq)
	if err != nil {
		return err
	}
	if rt == nil { // a system schema we do not capture
		return nil
	}
	if direct {
		if rt.columns != nil && int(e.ColumnCount) == len(rt.def.Columns) {
			return d.directRows(rt, e, h, body)
		}
		if err := decodeUnsigned(e, body, &d.unsigned); err != nil {
			return fmt.Errorf("table %s at %s: decode rows: %w", rt.def.QualifiedName(), d.here(h), err)
		}
	}
	for i, skipped := range e.SkippedColumns {
		if len(skipped) > 0 {
			return fmt.Errorf("table %s at %s: row %d has a partial image (binlog_row_image is not FULL for the session that wrote it)",
				rt.def.QualifiedName(), d.here(h), i)
		}
	}
	switch e.Type() {
	case replication.EnumRowsEventTypeInsert:
		for _, row := range e.Rows {
			if err := d.emit(rt, change.OpInsert, nil, row, h); err != nil {
				return err
			}
		}
	case replication.EnumRowsEventTypeDelete:
		for _, row := range e.Rows {
			if err := d.emit(rt, change.OpDelete, row, nil, h); err != nil {
				return err
			}
		}
	case replication.EnumRowsEventTypeUpdate:
		if len(e.Rows)%2 != 0 {
			return fmt.Errorf("table %s at %s: update event has %d row images, want pairs", rt.def.QualifiedName(), d.here(h), len(e.Rows))
		}
		for i := 0; i < len(e.Rows); i += 2 {
			if err := d.emit(rt, change.OpUpdate, e.Rows[i], e.Rows[i+1], h); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("table %s at %s: unknown rows event type %v", rt.def.QualifiedName(), d.here(h), h.EventType)
	}
	return nil
}

// emit builds one index event. The key is the after image's key, or the
// before image's for a delete; a key-changing update also records the old
// key (PKBefore).
func (d *decoder) emit(rt *resolvedTable, op change.Op, before, after []any, h *replication.EventHeader) error {
	ev := d.event(rt, op)
	var err error
	keyRow := after
	if before != nil {
		if ev.Before, err = d.image(rt, before, nil); err != nil {
			return fmt.Errorf("before image at %s: %w", d.here(h), err)
		}
		keyRow = before
	}
	if after != nil {
		if ev.After, err = d.image(rt, after, before); err != nil {
			return fmt.Errorf("after image at %s: %w", d.here(h), err)
		}
		keyRow = after
	}
	if ev.PK, err = rowimage.Key(rt.def, keyRow); err != nil {
		return fmt.Errorf("key at %s: %w", d.here(h), err)
	}
	if op == change.OpUpdate {
		old, err := rowimage.Key(rt.def, before)
		if err != nil {
			return fmt.Errorf("key of before image at %s: %w", d.here(h), err)
		}
		if old != ev.PK {
			ev.PKBefore = old
		}
	}
	return d.push(ev)
}

// event is the next index event of rt, without images and keys.
func (d *decoder) event(rt *resolvedTable, op change.Op) change.Event {
	return change.Event{
		Seq: d.lastSeq + 1, CommitTime: d.tx.commitTime, BinlogFile: d.pos.File,
		GTID: d.tx.gtid, Schema: rt.def.Schema, Table: rt.def.Name, Op: op,
		SchemaVersion: rt.version, Columns: rt.columns,
	}
}

// push adds ev, complete, to the pending events; a batch that reaches its
// limits is handed on.
func (d *decoder) push(ev change.Event) error {
	d.lastSeq++
	if d.tx.firstSeq == 0 {
		d.tx.firstSeq = d.lastSeq
	}
	if len(d.pending) == 0 {
		d.firstPending = time.Now()
	}
	d.pending = append(d.pending, ev)
	d.pendingBytes += heldBytes(&ev)
	d.unreported++
	if len(d.pending)-d.committed >= d.limits.rows || d.pendingBytes >= d.limits.bytes {
		return d.streamOpenTx()
	}
	return nil
}

// commit ends the open binlog transaction at this event's end position.
func (d *decoder) commit(h *replication.EventHeader) error {
	if h.LogPos == 0 {
		return fmt.Errorf("commit event in %s has end_log_pos 0: cannot checkpoint (enable FillZeroLogPos for MariaDB 11.4+)", d.pos.File)
	}
	end := uint64(h.LogPos)
	d.pos.Pos = end
	for i := d.tx.startIdx; i < len(d.pending); i++ {
		d.pending[i].EndPos = end
	}
	var fill *endPosFill
	if d.tx.streamed {
		fill = &endPosFill{fromSeq: d.tx.firstSeq, toSeq: d.lastSeq, file: d.pos.File, endPos: end}
	}
	if d.tx.gtid != "" {
		if err := d.gtidSet.add(d.tx.gtid); err != nil {
			return fmt.Errorf("GTID %s at %s: %w", d.tx.gtid, d.pos, err)
		}
	}
	d.lastCommit = d.tx.commitTime
	// GTIDSet is filled in when the checkpoint is flushed: formatting the
	// set at every commit cost more than a one-row transaction's decoding.
	d.checkpoint = &change.Checkpoint{
		Source: d.source, BinlogFile: d.pos.File, BinlogPos: end, GTID: d.tx.gtid,
		LastSeq: d.lastSeq, LastCommit: d.tx.commitTime,
	}
	d.committed = len(d.pending)
	d.tx = openTx{}
	if fill != nil {
		// The writer holds an index transaction open for the streamed part:
		// close it now, with the rest of this transaction.
		return d.flush(fill)
	}
	if len(d.pending) >= d.limits.rows || d.pendingBytes >= d.limits.bytes || len(d.schemas) > 0 {
		return d.flush(nil)
	}
	return nil
}

// due reports whether committed work has waited longer than the flush
// interval.
func (d *decoder) due(now time.Time) bool {
	return d.checkpoint != nil && (d.committed == 0 || now.Sub(d.firstPending) >= d.limits.interval)
}

// flush hands every complete transaction to the writer with its checkpoint.
func (d *decoder) flush(fill *endPosFill) error {
	if d.checkpoint == nil {
		return nil
	}
	raw := d.cut(d.committed)
	if d.checkpoint.GTIDSet == "" {
		// The set holds every committed transaction, and no more: a GTID
		// joins it at its commit.
		d.checkpoint.GTIDSet = d.gtidSet.String()
	}
	b := &batch{raw: raw, cutAt: d.pos, schemas: d.schemas, checkpoint: d.checkpoint, fill: fill}
	d.last = *d.checkpoint
	d.tx.startIdx -= d.committed
	if d.tx.startIdx < 0 {
		d.tx.startIdx = 0
	}
	d.committed = 0
	d.schemas = nil
	d.checkpoint = nil
	d.firstPending = time.Now()
	return d.out(b)
}

// heldBytes is about how much memory a pending event holds, for the batch
// byte limit.
func heldBytes(ev *change.Event) int { return len(ev.Before) + len(ev.After) + len(ev.PK) + 64 }

// cut takes the first n pending events out of pending, for the packer.
// When they are all of pending, the list itself goes and pending starts
// on a recycled one; otherwise they are copied out and the rest kept.
func (d *decoder) cut(n int) []change.Event {
	var out []change.Event
	if n == len(d.pending) {
		out, d.pending = d.pending, d.packer.list()
	} else {
		out = append(d.packer.list(), d.pending[:n]...)
		rest := copy(d.pending, d.pending[n:])
		clear(d.pending[rest:]) // the cut events live on in out
		d.pending = d.pending[:rest]
	}
	d.pendingBytes = 0
	for i := range d.pending {
		d.pendingBytes += heldBytes(&d.pending[i])
	}
	return out
}

// moveIdleCheckpoint, called when the stream is idle, moves the checkpoint
// past events read since the last commit that belong to no transaction (a
// MariaDB binlog checkpoint event, a rotate): without it the checkpoint
// would stay behind the source's position until the next commit, and a
// backup waiting for capture to pass a dump position would wait for traffic.
func (d *decoder) moveIdleCheckpoint() error {
	if d.tx.active || d.checkpoint != nil || len(d.pending) > 0 || d.pos.File == "" {
		return nil
	}
	if d.pos.File == d.last.BinlogFile && d.pos.Pos == d.last.BinlogPos {
		return nil
	}
	if c, err := binlogpos.Compare(d.pos, d.last.Pos().Coords()); err != nil || c <= 0 {
		return err
	}
	cp := d.last
	cp.BinlogFile, cp.BinlogPos = d.pos.File, d.pos.Pos
	d.checkpoint = &cp
	return d.flush(nil)
}

// arenaBlock is the size of the buffers images are carved from.
const arenaBlock = 1 << 20

// image encodes row in the index's stored form (change.Event.Columns): the
// values in column order, and for an update's after image (before not nil)
// rowimage.Unchanged for values equal to before's; a table whose column list
// could not be encoded gets an object image. It encodes into a scratch
// buffer, then carves the image from a shared buffer, so that an image costs
// no allocation of its own. Images are never written to after, and a buffer
// lives as long as any event refers to it. An image over a quarter of a
// buffer gets its own.
func (d *decoder) image(rt *resolvedTable, row, before []any) ([]byte, error) {
	var img []byte
	var err error
	switch {
	case rt.columns == nil:
		img, err = rowimage.AppendImage(d.scratch[:0], rt.def, row)
	case before != nil:
		img, err = rowimage.AppendValuesDelta(d.scratch[:0], rt.def, row, before)
	default:
		img, err = rowimage.AppendValues(d.scratch[:0], rt.def, row)
	}
	if err != nil {
		return nil, err
	}
	if cap(img) <= arenaBlock {
		d.scratch = img[:0] // keep what it grew to, within bounds
	}
	return d.carve(img), nil
}

// carve copies img into the shared buffer images are carved from (an image
// over a quarter of a buffer gets its own).
func (d *decoder) carve(img []byte) []byte {
	if len(img) > arenaBlock/4 {
		own := make([]byte, len(img))
		copy(own, img)
		return own
	}
	if cap(d.arena)-len(d.arena) < len(img) {
		d.arena = make([]byte, 0, arenaBlock)
	}
	start := len(d.arena)
	d.arena = append(d.arena, img...)
	return d.arena[start:len(d.arena):len(d.arena)]
}

// streamOpenTx hands the read part of a large open transaction to the writer
// so memory stays bounded by the batch limits. Complete transactions before
// it are flushed first with their checkpoint.
func (d *decoder) streamOpenTx() error {
	if err := d.flush(nil); err != nil {
		return err
	}
	if len(d.pending) == 0 {
		return nil
	}
	b := &batch{raw: d.cut(len(d.pending)), cutAt: d.pos, schemas: d.schemas}
	d.schemas = nil
	d.tx.startIdx = 0
	d.tx.streamed = true
	return d.out(b)
}

func mysqlGTID(e *replication.GTIDEvent) string {
	set, err := e.GTIDNext()
	if err != nil || set == nil {
		return ""
	}
	return set.String()
}

func commitTimeOf(e *replication.GTIDEvent, h *replication.EventHeader) time.Time {
	if e.OriginalCommitTimestamp != 0 {
		return e.OriginalCommitTime().UTC()
	}
	return time.Unix(int64(h.Timestamp), 0).UTC()
}

// gtidTracker keeps the executed GTID set of what has been captured.
type gtidTracker struct {
	flavor string
	set    mysql.GTIDSet
}

func (g *gtidTracker) add(gtid string) error {
	if g.set == nil {
		var err error
		if g.set, err = mysql.ParseGTIDSet(g.flavor, ""); err != nil {
			return err
		}
	}
	return g.set.Update(gtid)
}

func (g *gtidTracker) String() string {
	if g.set == nil {
		return ""
	}
	return g.set.String()
}

func (g *gtidTracker) load(flavor, text string) error {
	g.flavor = flavor
	set, err := mysql.ParseGTIDSet(flavor, text)
	if err != nil {
		return fmt.Errorf("parse checkpoint GTID set %q: %w", text, err)
	}
	g.set = set
	return nil
}
