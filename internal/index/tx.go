package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Tx is one index transaction of capture: the events of a batch, any schema
// versions it brings and the checkpoint after it commit together or not at
// all. A Tx is not safe for concurrent use.
type Tx struct {
	s      *Store
	tx     *sql.Tx
	source string
	fence  *Lease
	buf    []byte
	args   []any

	// Seqs and hours of the events inserted so far in this Tx.
	n                  int
	firstSeq, lastSeq  uint64
	minHour, maxHour   uint32
	checkpointSeq      uint64
	checkpointSeqKnown bool
}

// Begin starts an index transaction for source. When fence is not nil, Commit
// first checks, inside the transaction, that fence is still held (see Lease)
// and fails with ErrLeaseLost otherwise; fence may be nil in tests and tools
// that run without a capturer. Cancelling ctx rolls the transaction back.
func (s *Store) Begin(ctx context.Context, source string, fence *Lease) (*Tx, error) {
	if source == "" {
		return nil, errors.New("begin index tx: empty source")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin index tx: %w", err)
	}
	return &Tx{s: s, tx: tx, source: source, fence: fence}, nil
}

// InsertEvents adds evs (of the Tx's source) with multi-row INSERTs of at most
// ~4 MiB each: prepared statements of 256 or 32 rows, and one built text
// statement for a shorter rest. Seqs must grow strictly within a Tx and lie
// after the source's checkpoint; a seq already stored is never overwritten:
// that, and any seq out of order, fails with an error wrapping
// ErrDuplicateSeq. An event with an invalid op, a missing or extra image, or
// an image that is not valid UTF-8 fails the call. After an error the Tx must
// be rolled back.
func (t *Tx) InsertEvents(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	for i := range evs {
		if err := checkEvent(&evs[i]); err != nil {
			return fmt.Errorf("insert events %d..%d: %w", evs[0].Seq, evs[len(evs)-1].Seq, err)
		}
	}
	if err := t.checkSeqs(ctx, evs); err != nil {
		return fmt.Errorf("insert events %d..%d: %w", evs[0].Seq, evs[len(evs)-1].Seq, err)
	}
	for i := 0; i < len(evs); {
		n, prepared := nextChunk(evs[i:], t.s.maxStmt)
		chunk := evs[i : i+n]
		var err error
		if prepared && !t.s.forceText {
			err = t.execPrepared(ctx, chunk)
		} else {
			err = t.execText(ctx, chunk)
		}
		if err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1062 {
				err = fmt.Errorf("%w: %w", ErrDuplicateSeq, err)
			}
			return fmt.Errorf("insert events %d..%d: %w", chunk[0].Seq, chunk[n-1].Seq, err)
		}
		i += n
	}
	for i := range evs {
		h := HourID(evs[i].CommitTime)
		if t.n == 0 {
			t.firstSeq, t.minHour, t.maxHour = evs[i].Seq, h, h
		}
		t.minHour, t.maxHour = min(t.minHour, h), max(t.maxHour, h)
		t.lastSeq = evs[i].Seq
		t.n++
	}
	return nil
}

func (t *Tx) execText(ctx context.Context, evs []Event) error {
	t.buf = buildInsert(t.buf, t.source, evs)
	if len(t.buf) > t.s.maxPacket-64 {
		return fmt.Errorf("a %d-byte INSERT exceeds the index server's max_allowed_packet (%d)", len(t.buf), t.s.maxPacket)
	}
	_, err := t.tx.ExecContext(ctx, string(t.buf))
	if cap(t.buf) > 2*targetStmtBytes {
		t.buf = nil // do not keep a buffer grown by one huge event
	}
	return err
}

func (t *Tx) execPrepared(ctx context.Context, evs []Event) error {
	st, err := t.s.insertStmt(ctx, len(evs))
	if err != nil {
		return err
	}
	ts := t.tx.StmtContext(ctx, st) // re-prepared only on a connection that lacks it
	defer ts.Close()
	t.args = t.args[:0]
	for i := range evs {
		t.args = appendEventArgs(t.args, t.source, &evs[i])
	}
	_, err = ts.ExecContext(ctx, t.args...)
	clear(t.args) // drop references to the images
	return err
}

// insertStmt returns the Store's prepared INSERT of n rows.
func (s *Store) insertStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.stmts[n]; st != nil {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, insertPlaceholders(n))
	if err != nil {
		return nil, fmt.Errorf("prepare insert of %d rows: %w", n, err)
	}
	s.stmts[n] = st
	return st, nil
}

// checkSeqs verifies seqs grow strictly, after this Tx's previous events and
// after the source's checkpoint.
func (t *Tx) checkSeqs(ctx context.Context, evs []Event) error {
	prev := t.lastSeq
	if t.n == 0 {
		if !t.checkpointSeqKnown {
			err := t.tx.QueryRowContext(ctx, "SELECT last_seq FROM checkpoints WHERE source = ?", t.source).Scan(&t.checkpointSeq)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("read checkpoint: %w", err)
			}
			t.checkpointSeqKnown = true
		}
		prev = t.checkpointSeq
		if evs[0].Seq <= prev && prev > 0 {
			return fmt.Errorf("%w: seq %d is not after checkpoint seq %d", ErrDuplicateSeq, evs[0].Seq, prev)
		}
	} else if evs[0].Seq <= prev {
		return fmt.Errorf("%w: seq %d is not after seq %d of this transaction", ErrDuplicateSeq, evs[0].Seq, prev)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			return fmt.Errorf("%w: seq %d follows seq %d", ErrDuplicateSeq, evs[i].Seq, evs[i-1].Seq)
		}
	}
	return nil
}

// SetEndPos sets binlog file and end position of the events fromSeq..toSeq
// (inclusive) of the Tx's source: the events of a large transaction inserted
// before its end was known. Setting the same values again is harmless.
func (t *Tx) SetEndPos(ctx context.Context, fromSeq, toSeq uint64, file string, endPos uint64) error {
	if fromSeq > toSeq {
		return fmt.Errorf("set end pos %d..%d: empty range", fromSeq, toSeq)
	}
	q := "UPDATE events SET binlog_file = ?, end_pos = ? WHERE source = ? AND seq BETWEEN ? AND ?"
	args := []any{file, endPos, t.source, fromSeq, toSeq}
	if t.n > 0 && fromSeq >= t.firstSeq && toSeq <= t.lastSeq {
		// All inserted by this Tx: touch only the partitions they went to.
		q += " AND hour_id BETWEEN ? AND ?"
		args = append(args, t.minHour, t.maxHour)
	}
	if _, err := t.tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("set end pos %d..%d: %w", fromSeq, toSeq, err)
	}
	return nil
}

// PutSchemaVersion records one table version. v.Source may be empty (the Tx's
// source is used) but not another source. A version already recorded for the
// table is an error, never overwritten. A zero CreatedAt is set to now.
func (t *Tx) PutSchemaVersion(ctx context.Context, v SchemaVersion) error {
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
func (t *Tx) SaveCheckpoint(ctx context.Context, c Checkpoint) error {
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
