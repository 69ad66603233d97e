package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/change"
)

// Tx is one index transaction of capture: the events of a batch, any schema
// versions it brings and the checkpoint after it commit together or not at
// all. A Tx is not safe for concurrent use.
type Tx struct {
	s      *Store
	tx     *sql.Tx
	source string
	fence  *Lease
	args   []any

	// Seqs and hours of the events inserted so far in this Tx.
	n                  int
	firstSeq, lastSeq  uint64
	minHour, maxHour   uint32
	checkpointSeq      uint64 // the greater of the checkpoint's and the last stored seq
	checkpointSeqKnown bool
	// unknownEnd are the seq ranges of the chunks this Tx inserted with end
	// position 0 and SetEndPos has not fixed yet.
	unknownEnd [][2]uint64
}

// Begin starts an index transaction for source. When fence is not nil, Commit
// first checks, inside the transaction, that fence is still held (see Lease)
// and fails with ErrLeaseLost otherwise; fence may be nil in tests and tools
// that run without a capturer. Cancelling ctx rolls the transaction back.
func (s *Store) Begin(ctx context.Context, source string, fence *Lease) (*Tx, error) {
	if source == "" {
		return nil, errors.New("begin index tx: empty source")
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin index tx: %w", err)
	}
	return &Tx{s: s, tx: tx, source: source, fence: fence}, nil
}

// InsertEvents adds evs (of the Tx's source): PackEvents, then InsertPacked.
// After an error the Tx must be rolled back.
func (t *Tx) InsertEvents(ctx context.Context, evs []change.Event) error {
	p, err := PackEvents(evs)
	if err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	return t.InsertPacked(ctx, p)
}

// InsertPacked stores p with prepared multi-row INSERTs of at most ~255 KiB
// each. Seqs must lie after this Tx's previous events, the source's
// checkpoint and every stored event; a seq already stored is never
// overwritten: that fails with an error wrapping ErrDuplicateSeq. After an
// error the Tx must be rolled back.
func (t *Tx) InsertPacked(ctx context.Context, p *Packed) error {
	if p.events == 0 {
		return nil
	}
	if err := t.checkSeqs(ctx, p.firstSeq); err != nil {
		return fmt.Errorf("insert events %d..%d: %w", p.firstSeq, p.lastSeq, err)
	}
	return t.insertChunks(ctx, p)
}

// insertChunks stores p's chunks, without InsertPacked's check that they
// come after every stored event (reindex inserts hours whose seqs
// interleave); the primary key still refuses a chunk stored twice.
func (t *Tx) insertChunks(ctx context.Context, p *Packed) error {
	for i := 0; i < len(p.chunks); {
		n := nextStmt(p.chunks[i:], t.s.maxStmt)
		part := p.chunks[i : i+n]
		if err := t.execInsert(ctx, part); err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1062 {
				err = fmt.Errorf("%w: %w", ErrDuplicateSeq, err)
			}
			return fmt.Errorf("insert events %d..%d: %w", part[0].firstSeq, part[n-1].lastSeq, err)
		}
		i += n
	}
	if t.n == 0 {
		t.firstSeq, t.minHour, t.maxHour = p.firstSeq, p.minHour, p.maxHour
	}
	t.minHour, t.maxHour = min(t.minHour, p.minHour), max(t.maxHour, p.maxHour)
	t.lastSeq = p.lastSeq
	for i := range p.chunks {
		if c := &p.chunks[i]; c.head.EndPos == 0 {
			t.unknownEnd = append(t.unknownEnd, [2]uint64{c.firstSeq, c.lastSeq})
		}
	}
	t.n += p.events
	return nil
}

func (t *Tx) execInsert(ctx context.Context, cs []chunk) error {
	if size := stmtBytes(cs); size > t.s.maxPacket-64 {
		return fmt.Errorf("a %d-byte INSERT exceeds the index server's max_allowed_packet (%d)", size, t.s.maxPacket)
	}
	st, err := t.s.insertStmt(ctx, len(cs))
	if err != nil {
		return err
	}
	ts := t.tx.StmtContext(ctx, st) // re-prepared only on a connection that lacks it
	defer ts.Close()
	t.args = t.args[:0]
	for i := range cs {
		t.args = appendChunkArgs(t.args, t.source, &cs[i])
	}
	_, err = ts.ExecContext(ctx, t.args...)
	clear(t.args) // drop references to the payloads
	return err
}

// insertStmt returns the Store's prepared INSERT of n chunk rows.
func (s *Store) insertStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.stmts[n]; st != nil {
		return st, nil
	}
	st, err := s.wdb.PrepareContext(ctx, insertPlaceholders(n))
	if err != nil {
		return nil, fmt.Errorf("prepare insert of %d chunks: %w", n, err)
	}
	s.stmts[n] = st
	return st, nil
}

// checkSeqs verifies that first comes after this Tx's previous events, the
// source's checkpoint and every stored event of the source (a seq inside a
// stored chunk is not caught by the primary key).
func (t *Tx) checkSeqs(ctx context.Context, first uint64) error {
	if t.n > 0 {
		if first <= t.lastSeq {
			return fmt.Errorf("%w: seq %d is not after seq %d of this transaction", ErrDuplicateSeq, first, t.lastSeq)
		}
		return nil
	}
	if !t.checkpointSeqKnown {
		err := t.tx.QueryRowContext(ctx, "SELECT last_seq FROM checkpoints WHERE source = ?", t.source).Scan(&t.checkpointSeq)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read checkpoint: %w", err)
		}
		stored, err := maxStoredSeq(ctx, t.tx, t.source)
		if err != nil {
			return fmt.Errorf("read last stored seq: %w", err)
		}
		t.checkpointSeq = max(t.checkpointSeq, stored)
		t.checkpointSeqKnown = true
	}
	if prev := t.checkpointSeq; first <= prev && prev > 0 {
		return fmt.Errorf("%w: seq %d is not after stored seq %d", ErrDuplicateSeq, first, prev)
	}
	return nil
}

// SetEndPos sets binlog file and end position of the events fromSeq..toSeq
// (inclusive) of the Tx's source: the events of a large transaction inserted
// before its end was known. Such events are only in chunks whose header
// end_pos is 0 (see chunk.go), so only those headers change; a chunk of
// unknown end positions that reaches across fromSeq or toSeq is an error
// (the range is not one transaction's). Setting the same values again is
// harmless.
func (t *Tx) SetEndPos(ctx context.Context, fromSeq, toSeq uint64, file string, endPos uint64) error {
	if fromSeq > toSeq {
		return fmt.Errorf("set end pos %d..%d: empty range", fromSeq, toSeq)
	}
	mine := t.n > 0 && fromSeq >= t.firstSeq && toSeq <= t.lastSeq
	if err := t.checkEndPosRange(ctx, fromSeq, toSeq, mine); err != nil {
		return err
	}
	q := "UPDATE event_chunks SET binlog_file = ?, end_pos = ? WHERE source = ? AND first_seq BETWEEN ? AND ? AND end_pos = 0"
	args := []any{file, endPos, t.source, fromSeq, toSeq}
	if mine {
		// All inserted by this Tx: touch only the partitions they went to.
		q += " AND hour_id BETWEEN ? AND ?"
		args = append(args, t.minHour, t.maxHour)
	}
	if _, err := t.tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("set end pos %d..%d: %w", fromSeq, toSeq, err)
	}
	return nil
}

// checkEndPosRange fails when a chunk of unknown end positions reaches
// across fromSeq or toSeq. mine says the range lies in what this Tx
// inserted: then the Tx's own list of such chunks answers, without a query.
func (t *Tx) checkEndPosRange(ctx context.Context, fromSeq, toSeq uint64, mine bool) error {
	straddles := func(first, last uint64) bool {
		return (first < fromSeq && last >= fromSeq) || (first <= toSeq && last > toSeq)
	}
	fail := func(first, last uint64) error {
		return fmt.Errorf("set end pos %d..%d: events %d..%d, of unknown end position, reach outside the range", fromSeq, toSeq, first, last)
	}
	if mine {
		kept := t.unknownEnd[:0]
		for _, r := range t.unknownEnd {
			if straddles(r[0], r[1]) {
				return fail(r[0], r[1])
			}
			if r[0] > toSeq || r[1] < fromSeq {
				kept = append(kept, r) // not in this range: still unknown
			}
		}
		t.unknownEnd = kept
		return nil
	}
	// The chunks that could reach across: those holding seqs on both sides
	// of fromSeq-1|fromSeq or of toSeq|toSeq+1.
	for _, at := range []uint64{fromSeq - 1, toSeq} {
		if at == math.MaxUint64 { // fromSeq 0: nothing starts before it
			continue
		}
		cs, err := chunksAcross(ctx, t.tx, t.source, at)
		if err != nil {
			return fmt.Errorf("set end pos %d..%d: %w", fromSeq, toSeq, err)
		}
		for _, c := range cs {
			if c.endPos == 0 && straddles(c.first, c.last) {
				return fail(c.first, c.last)
			}
		}
	}
	return nil
}

// PutSchemaVersion records one table version. v.Source may be empty (the Tx's
// source is used) but not another source. A version already recorded for the
// table is an error, never overwritten. A zero CreatedAt is set to now.
func (t *Tx) PutSchemaVersion(ctx context.Context, v change.SchemaVersion) error {
	if v.Source != "" && v.Source != t.source {
		return fmt.Errorf("put schema version %s.%s v%d: source %q in a tx of %q", v.Schema, v.Table, v.Version, v.Source, t.source)
	}
	if v.Version == 0 {
		return fmt.Errorf("put schema version %s.%s: version must be >= 1", v.Schema, v.Table)
	}
	var def sql.NullString
	if v.Definition != nil {
		j, err := json.Marshal(v.Definition)
		if err != nil {
			return fmt.Errorf("put schema version %s.%s v%d: %w", v.Schema, v.Table, v.Version, err)
		}
		def = sql.NullString{String: string(j), Valid: true}
	}
	created := v.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO schema_history
		(source, schema_name, table_name, version, seq, binlog_file, binlog_pos, ddl, definition, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.source, v.Schema, v.Table, v.Version, v.Seq, v.BinlogFile, v.BinlogPos, v.DDL, def, created.UTC())
	if err != nil {
		return fmt.Errorf("put schema version %s.%s v%d: %w", v.Schema, v.Table, v.Version, err)
	}
	return nil
}

// SaveCheckpoint writes the checkpoint of the Tx's source (insert or
// replace). c.Source may be empty but not another source. A zero UpdatedAt is
// set to now.
func (t *Tx) SaveCheckpoint(ctx context.Context, c change.Checkpoint) error {
	if c.Source != "" && c.Source != t.source {
		return fmt.Errorf("save checkpoint: source %q in a tx of %q", c.Source, t.source)
	}
	upd := c.UpdatedAt
	if upd.IsZero() {
		upd = time.Now()
	}
	var last sql.NullTime
	if !c.LastCommit.IsZero() {
		last = sql.NullTime{Time: c.LastCommit.UTC(), Valid: true}
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO checkpoints
		(source, binlog_file, binlog_pos, gtid, gtid_set, last_seq, last_commit_ts, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON DUPLICATE KEY UPDATE binlog_file = VALUES(binlog_file), binlog_pos = VALUES(binlog_pos),
		gtid = VALUES(gtid), gtid_set = VALUES(gtid_set), last_seq = VALUES(last_seq),
		last_commit_ts = VALUES(last_commit_ts), updated_at = VALUES(updated_at)`,
		t.source, c.BinlogFile, c.BinlogPos, nullString(c.GTID), nullString(c.GTIDSet), c.LastSeq, last, upd.UTC())
	if err != nil {
		return fmt.Errorf("save checkpoint %s %s:%d seq %d: %w", t.source, c.BinlogFile, c.BinlogPos, c.LastSeq, err)
	}
	return nil
}

// Commit makes everything written in the Tx durable at once. With a fence it
// first checks, inside the transaction, that the lease is still ours; if not,
// the Tx is rolled back and the error wraps ErrLeaseLost. On any error nothing
// of the Tx is stored.
func (t *Tx) Commit() error {
	if t.fence != nil {
		if err := t.fence.check(context.Background(), t.tx); err != nil {
			t.tx.Rollback()
			return fmt.Errorf("commit index tx: %w", err)
		}
	}
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("commit index tx: %w", err)
	}
	return nil
}

// Rollback discards the Tx. It returns nil if the Tx already ended (committed
// or rolled back), so it can be deferred.
func (t *Tx) Rollback() error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("rollback index tx: %w", err)
	}
	return nil
}
