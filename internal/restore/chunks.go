package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/throttle"
)

// How long a slice waits in a pause before it returns to say why
// (pauseReport), and how often it reads the signals meanwhile.
const (
	pauseReport = 3 * time.Second
	pausePoll   = 250 * time.Millisecond
	// maxStatementBytes bounds one INSERT of a chunk (as a .sql export's).
	maxStatementBytes = sqlexport.DefaultMaxStatementBytes
)

// loader loads one slice of the chunks of one part of a table, on its
// own connection.
type loader struct {
	o Options
	// tg is the target: its pool, replicas and throttle query.
	tg   *Target
	job  Job
	conn *sql.Conn
	part Part
	// share is the part's share of --max-rows-per-second (1 / parts).
	share    int
	progress func(stage string, loaded int64, paused string)
	chunk    int
	slice    time.Duration
	// data, when set, loads chunks with LOAD DATA LOCAL INFILE instead
	// of INSERTs (the target accepts it; see loadChunkData).
	data *LoadData

	replicas []*sql.DB
	names    []string
	log      *slog.Logger
}

func (l *loader) openReplicas(ctx context.Context) error {
	for i, r := range l.tg.Replicas {
		db, addr, err := OpenServer(ctx, r, fmt.Sprintf("replica %d", i+1))
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

// run loads the part's chunks from its checkpoint on until the part is
// loaded, the slice is used up, or a pause lasted pauseReport (or the
// rest of the slice): a slice that ends in a pause says why. Its result's
// Rows are the part's.
func (l *loader) run(ctx context.Context, st Staged) (Result, error) {
	lim := l.o.Limits.WithDefaults()
	if lim.MaxRowsPerSecond > 0 && l.share > 1 {
		lim.MaxRowsPerSecond = max(lim.MaxRowsPerSecond/l.share, 1)
	}
	res := Result{Rows: l.part.RowsLoaded}
	if l.chunk <= 0 {
		l.chunk = throttle.FirstChunk
	}
	if l.slice <= 0 {
		l.slice = DefaultLoadSlice
	}
	r, err := l.openRange(st)
	if err != nil {
		return res, err
	}
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	t := st.Foot.Table
	rows, err := sqlexport.NewRows(t)
	if err != nil {
		return res, fail(KindBadInput, err)
	}
	if localInfile(ctx, l.conn) {
		if l.data, err = NewLoadData(t); err != nil {
			return res, fail(KindBadInput, err)
		}
	}
	order, err := NewKeyOrder(t)
	if err != nil {
		return res, fail(KindBadInput, err)
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
			l.progress(StagePaused, 0, reason)
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
		if w := throttle.RateWait(res.Written, time.Since(start)-paused, lim.MaxRowsPerSecond); w > 0 {
			if err := sleep(ctx, min(w, time.Second)); err != nil {
				return res, err
			}
			continue
		}
		size := throttle.CapChunk(l.chunk, lim.MaxRowsPerSecond)
		n, took, err := l.chunkOnce(ctx, r, rows, prefix, order, size)
		if errors.Is(err, errLoadDataRefused) {
			// Nothing of the chunk is committed, but its reader moved on.
			l.log.Warn("target refuses LOAD DATA LOCAL INFILE; loading with INSERTs", "table", l.job.Target(), "part", l.part.Part+1)
			l.data = nil
			r.Close()
			if r, err = l.openRange(st); err != nil {
				return res, err
			}
			continue
		}
		if err != nil {
			return res, err
		}
		res.Rows, res.Written, res.Done = l.part.RowsLoaded, res.Written+int64(n), l.part.Done()
		if n > 0 {
			res.Chunks++
			res.ChunkMillis = append(res.ChunkMillis, int32(took.Milliseconds()))
			l.chunk = throttle.NextChunk(n, took, lim)
		}
		l.progress(StageLoading, int64(n), "")
	}
	res.ChunkRows = l.chunk
	return res, nil
}

// openRange opens the part's rows after its checkpoint.
func (l *loader) openRange(st Staged) (RowReader, error) {
	r, saw, err := st.OpenRange(KeyRange{From: l.part.From, To: l.part.To}, l.part.LastKey, l.part.RowsLoaded)
	if err != nil {
		return nil, stagedErr(err)
	}
	if !saw {
		r.Close()
		return nil, fail(KindCheckpointConflict, fmt.Errorf("staged %s has no row with the key %s, the last loaded row of part %d's checkpoint",
			l.job.Table.Key(), l.part.LastKey, l.part.Part+1))
	}
	return r, nil
}

// pauseReason reads the throttle's signals and decides.
func (l *loader) pauseReason(ctx context.Context, lim throttle.Limits) (string, error) {
	s, err := readSignals(ctx, l.tg.DB, l.replicas, l.names, l.tg.ThrottleQuery)
	if err != nil {
		return "", err
	}
	return throttle.Pause(s, lim), nil
}

// chunkOnce loads the next size rows of r (fewer at the part's end) in
// one transaction with the part's checkpoint move; it returns the rows
// loaded and the transaction's time. The chunk that reaches the part's
// end records the part as loaded. The chunk's INSERTs (of at most
// maxStatementBytes) run on the target while the next ones are built
// from the staged rows (statementPipe).
func (l *loader) chunkOnce(ctx context.Context, r RowReader, rows *sqlexport.Rows, prefix string, order *KeyOrder, size int) (int, time.Duration, error) {
	began := time.Now()
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("target: begin chunk of %s: %w", l.job.Target(), err)
	}
	defer tx.Rollback()
	var n int
	var lastKey *string
	if l.data != nil {
		n, lastKey, err = l.loadChunkData(ctx, tx, r, order, size)
	} else {
		pipe := newStatementPipe(ctx, tx)
		n, lastKey, err = l.buildChunk(r, rows, prefix, order, size, pipe.send)
		if perr := pipe.wait(); err == nil && perr != nil {
			err = l.loadErr(n, perr)
		}
	}
	if err != nil {
		return 0, 0, err
	}
	state := StateLoading
	if n < size {
		state = StateLoaded
	}
	if lastKey == nil && l.part.LastKey != "" {
		k := l.part.LastKey
		lastKey = &k
	}
	if err := advancePart(ctx, tx, l.o.Bookkeeping(), l.job, l.part, int64(n), lastKey, state); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("target: commit %d rows of %s part %d after its row %d: %w", n, l.job.Target(), l.part.Part+1, l.part.RowsLoaded, err)
	}
	took := time.Since(began)
	l.part.RowsLoaded, l.part.Chunks, l.part.State = l.part.RowsLoaded+int64(n), l.part.Chunks+1, state
	if lastKey != nil {
		l.part.LastKey = *lastKey
	}
	return n, took, nil
}

// buildChunk reads up to size rows of r and passes their multi-row
// INSERTs to send as each is complete; it returns the rows read and the
// last one's key.
func (l *loader) buildChunk(r RowReader, rows *sqlexport.Rows, prefix string, order *KeyOrder, size int, send func([]byte) bool) (int, *string, error) {
	var stmt []byte
	failed := false // a statement failed: wait says why
	n, key, err := l.readChunk(r, order, size, func(num int64, row []rowimage.Cell) (bool, error) {
		tuple := len(stmt)
		if len(stmt) == 0 {
			stmt = append(make([]byte, 0, maxStatementBytes+64<<10), prefix...)
		} else {
			stmt = append(stmt, ',')
		}
		mark := len(stmt)
		var err error
		if stmt, err = rows.AppendTuple(stmt, num, row); err != nil {
			return false, fail(KindBadInput, err)
		}
		if tuple > 0 && len(stmt) > maxStatementBytes { // close the statement before this row
			t := append([]byte(nil), stmt[mark:]...)
			if !send(stmt[:tuple]) {
				failed = true
				return false, nil
			}
			stmt = append(append(make([]byte, 0, maxStatementBytes+64<<10), prefix...), t...)
		}
		return true, nil
	})
	if err != nil || failed {
		return n, nil, err
	}
	if len(stmt) > 0 && !send(stmt) {
		return n, nil, nil
	}
	return n, key, nil
}

// loadErr is the target's failure to load a chunk of n rows.
func (l *loader) loadErr(n int, err error) error {
	return fmt.Errorf("target: load %d rows of %s part %d after its row %d into %s.%s: %w", n, l.job.Table.Key(), l.part.Part+1, l.part.RowsLoaded, l.job.Schema, l.job.Load, err)
}

// readChunk reads up to size rows of r and calls add with each and its
// row number in the part (counted after the checkpoint's rows); it returns
// the rows read and the last one's key (nil for a keyless table or no
// row). add returning false stops the chunk: then the rows added before
// this one count, with no key, and add's error is returned.
func (l *loader) readChunk(r RowReader, order *KeyOrder, size int, add func(num int64, row []rowimage.Cell) (bool, error)) (int, *string, error) {
	var last []rowimage.Cell // the last row's key cells (copied: rows are reused)
	n := 0
	for n < size {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, fmt.Errorf("staged %s: %w", l.job.Table.Key(), err)
		}
		if ok, err := add(l.part.RowsLoaded+int64(n)+1, row); !ok || err != nil {
			return n, nil, err
		}
		if order != nil {
			last = order.Key(last, row)
		}
		n++
	}
	if n == 0 || order == nil {
		return n, nil, nil
	}
	k := order.Text(last)
	return n, &k, nil
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
