package activities

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"time"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/types"
)

// loader loads one slice of a table's chunks.
type loader struct {
	a        *Activities
	sp       RestoreSpec
	job      RestoreTableJob
	db       *sql.DB
	conn     *sql.Conn
	cp       restore.Checkpoint
	progress func(stage string, rows int64, paused string)
	chunk    int
	slice    time.Duration

	replicas []*sql.DB
	names    []string
}

func (l *loader) openReplicas(ctx context.Context) error {
	for i, r := range l.sp.Replicas {
		db, addr, err := r.open(ctx, fmt.Sprintf("replica %d", i+1))
		if err != nil {
			return err
		}
		l.replicas, l.names = append(l.replicas, db), append(l.names, addr)
	}
	return nil
}

func (l *loader) closeReplicas() {
	for _, db := range l.replicas {
		db.Close()
	}
}

// run loads chunks from the checkpoint on until the table is loaded, the
// slice is used up, or a pause lasted pauseReport (or the rest of the
// slice): a slice that ends in a pause says why.
func (l *loader) run(ctx context.Context, st stagedTable) (LoadTableResult, error) {
	lim := l.sp.Limits.WithDefaults()
	res := LoadTableResult{Rows: l.cp.RowsLoaded, Total: l.cp.RowsTotal}
	if l.chunk <= 0 {
		l.chunk = restore.FirstChunk
	}
	if l.slice <= 0 {
		l.slice = DefaultLoadSlice
	}
	r, err := st.open()
	if err != nil {
		return res, err
	}
	defer r.Close()
	t := st.Foot.Table
	rows, err := sqlexport.NewRows(t)
	if err != nil {
		return res, nonRetryable(ErrBadInput, err)
	}
	var keyIdx []int
	if len(t.Key) > 0 && t.KeyKind != schema.KeyRow {
		if keyIdx, err = t.KeyIndexes(); err != nil {
			return res, nonRetryable(ErrBadInput, err)
		}
	}
	if err := l.skip(r, keyIdx); err != nil {
		return res, err
	}
	prefix := rows.InsertPrefix(l.job.Schema, l.job.Load)
	start := time.Now()
	var paused time.Duration
	for !res.Done && time.Since(start) < l.slice {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		reason, err := l.pauseReason(ctx, lim)
		if err != nil {
			return res, err
		}
		if reason != "" {
			l.progress("paused", l.cp.RowsLoaded, reason)
			if paused >= pauseReport || time.Since(start)+pausePoll >= l.slice {
				res.Paused = reason
				break
			}
			if err := sleep(ctx, pausePoll); err != nil {
				return res, err
			}
			paused += pausePoll
			continue
		}
		if w := restore.RateWait(res.Written, time.Since(start)-paused, lim.MaxRowsPerSecond); w > 0 {
			if err := sleep(ctx, min(w, time.Second)); err != nil {
				return res, err
			}
			continue
		}
		size := restore.CapChunk(l.chunk, lim.MaxRowsPerSecond)
		n, took, err := l.chunkOnce(ctx, r, rows, prefix, keyIdx, size)
		if err != nil {
			return res, err
		}
		res.Rows, res.Written, res.Done = l.cp.RowsLoaded, res.Written+int64(n), l.cp.Done()
		if n > 0 {
			res.Chunks++
			res.ChunkMillis = append(res.ChunkMillis, int32(took.Milliseconds()))
			l.chunk = restore.NextChunk(n, took, lim)
		}
		l.progress("loading", l.cp.RowsLoaded, "")
	}
	res.ChunkRows = l.chunk
	return res, nil
}

// skip reads past the rows the checkpoint says are committed and checks
// that the last of them has the checkpoint's key: the staged table is the
// one the load started with.
func (l *loader) skip(r rowReader, keyIdx []int) error {
	var last []types.Cell
	for i := int64(0); i < l.cp.RowsLoaded; i++ {
		row, err := r.Next()
		if err != nil {
			return fmt.Errorf("staged %s: skip to row %d: %w", l.job.Table.Key(), l.cp.RowsLoaded, err)
		}
		if i == l.cp.RowsLoaded-1 {
			last = row
		}
	}
	if last == nil || len(keyIdx) == 0 {
		return nil
	}
	if k := keyText(last, keyIdx); *k != l.cp.LastKey {
		return nonRetryable(ErrCheckpointConflict, fmt.Errorf("staged %s: row %d has key %s, the checkpoint says %s",
			l.job.Table.Key(), l.cp.RowsLoaded, *k, l.cp.LastKey))
	}
	return nil
}

// pauseReason reads the throttle's signals and decides.
func (l *loader) pauseReason(ctx context.Context, lim restore.Limits) (string, error) {
	s, err := signals(ctx, l.db, l.replicas, l.names, l.sp.ThrottleQuery)
	if err != nil {
		return "", err
	}
	return restore.Pause(s, lim), nil
}

// chunkOnce loads the next size rows of r (fewer at the end) in one
// transaction with the checkpoint's move; it returns the rows loaded and
// the transaction's time. The chunk's INSERTs (of at most
// maxStatementBytes) run on the target while the next ones are built from
// the staged rows (statementPipe).
func (l *loader) chunkOnce(ctx context.Context, r rowReader, rows *sqlexport.Rows, prefix string, keyIdx []int, size int) (int, time.Duration, error) {
	began := time.Now()
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("target: begin chunk of %s: %w", l.job.Target(), err)
	}
	defer tx.Rollback()
	pipe := newStatementPipe(ctx, tx)
	n, lastKey, err := l.buildChunk(r, rows, prefix, keyIdx, size, pipe.send)
	if perr := pipe.wait(); err == nil && perr != nil {
		err = fmt.Errorf("target: load rows %d..%d of %s into %s.%s: %w", l.cp.RowsLoaded+1, l.cp.RowsLoaded+int64(n), l.job.Table.Key(), l.job.Schema, l.job.Load, perr)
	}
	if err != nil {
		return 0, 0, err
	}
	total := l.cp.RowsLoaded + int64(n)
	state := restore.StateLoading
	if total == l.cp.RowsTotal {
		state = restore.StateLoaded
	} else if n == 0 {
		return 0, 0, nonRetryable(ErrCheckpointConflict, fmt.Errorf("staged %s ends at row %d; the checkpoint expects %d rows",
			l.job.Table.Key(), total, l.cp.RowsTotal))
	}
	if lastKey == nil && len(keyIdx) > 0 && l.cp.LastKey != "" {
		k := l.cp.LastKey
		lastKey = &k
	}
	if err := advanceCheckpoint(ctx, tx, l.sp.checkpointSchema(), l.cp, total, lastKey, state); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("target: commit rows %d..%d of %s: %w", l.cp.RowsLoaded+1, total, l.job.Target(), err)
	}
	took := time.Since(began)
	l.cp.RowsLoaded, l.cp.Chunks, l.cp.State = total, l.cp.Chunks+1, state
	if lastKey != nil {
		l.cp.LastKey = *lastKey
	}
	return n, took, nil
}

// buildChunk reads up to size rows of r and passes their multi-row
// INSERTs to send as each is complete; it returns the rows read and the
// last one's key.
func (l *loader) buildChunk(r rowReader, rows *sqlexport.Rows, prefix string, keyIdx []int, size int, send func([]byte) bool) (int, *string, error) {
	var stmt []byte
	var lastKey *string
	n := 0
	for n < size {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, fmt.Errorf("staged %s: %w", l.job.Table.Key(), err)
		}
		tuple := len(stmt)
		if len(stmt) == 0 {
			stmt = append(make([]byte, 0, maxStatementBytes+64<<10), prefix...)
		} else {
			stmt = append(stmt, ',')
		}
		mark := len(stmt)
		if stmt, err = rows.AppendTuple(stmt, l.cp.RowsLoaded+int64(n)+1, row); err != nil {
			return 0, nil, nonRetryable(ErrBadInput, err)
		}
		if tuple > 0 && len(stmt) > maxStatementBytes { // close the statement before this row
			t := append([]byte(nil), stmt[mark:]...)
			if !send(stmt[:tuple]) {
				return n, nil, nil // the statement failed: wait says why
			}
			stmt = append(append(make([]byte, 0, maxStatementBytes+64<<10), prefix...), t...)
		}
		lastKey = keyText(row, keyIdx)
		n++
	}
	if len(stmt) > 0 && !send(stmt) {
		return n, nil, nil
	}
	return n, lastKey, nil
}

// statementPipe runs a transaction's statements on another goroutine, in
// the order sent, while the caller builds the next ones.
type statementPipe struct {
	ctx    context.Context
	tx     *sql.Tx
	stmts  chan []byte
	failed chan struct{}
	done   chan error
}

func newStatementPipe(ctx context.Context, tx *sql.Tx) *statementPipe {
	p := &statementPipe{ctx: ctx, tx: tx, stmts: make(chan []byte, 1), failed: make(chan struct{}), done: make(chan error, 1)}
	go p.run()
	return p
}

func (p *statementPipe) run() {
	for s := range p.stmts {
		if _, err := p.tx.ExecContext(p.ctx, string(s)); err != nil {
			close(p.failed)
			for range p.stmts {
			}
			p.done <- err
			return
		}
	}
	p.done <- nil
}

// send queues s; false when an earlier statement failed.
func (p *statementPipe) send(s []byte) bool {
	select {
	case <-p.failed:
		return false
	case p.stmts <- s:
		return true
	}
}

// wait ends the pipe and returns the first statement's error.
func (p *statementPipe) wait() error {
	close(p.stmts)
	return <-p.done
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
