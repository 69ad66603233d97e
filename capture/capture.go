// Package capture reads a MySQL/MariaDB binlog like a replica and writes
// every row change, with its before and after image, into the index. Events
// and the checkpoint that covers them are committed in one index transaction,
// only at binlog transaction boundaries, so a restart resumes exactly where
// the index ends: nothing lost, nothing written twice.
package capture

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
)

// Config is what one capture process needs. Passwords travel only inside
// SourceDSN, which is never logged.
type Config struct {
	// Source names the captured server in the index ("main").
	Source string
	// SourceDSN is a go-sql-driver DSN of a user with REPLICATION SLAVE,
	// REPLICATION CLIENT and SELECT on information_schema.
	SourceDSN string
	// ServerID is the replica server id capture registers with; 0 derives
	// one from Source. It must differ from every real replica's.
	ServerID uint32
	// Start is where a source with no checkpoint starts: "current" (the end
	// of the newest binlog, with the schema read from the source), "earliest"
	// (the oldest binlog the source has) or "file:pos".
	Start string
	// ContinuePastGap lets capture go on from the oldest binlog the source
	// has when the checkpoint's binlog was purged. The gap is recorded either way.
	ContinuePastGap bool
	// BatchRows, BatchBytes and FlushInterval bound how much is held before
	// it is written to the index, and how stale the index may be.
	BatchRows     int
	BatchBytes    int
	FlushInterval time.Duration
	Metrics       *Metrics
	Logger        *slog.Logger
}

func (c *Config) defaults() error {
	if c.Source == "" {
		return errors.New("capture: source name is empty")
	}
	if c.SourceDSN == "" {
		return errors.New("capture: source DSN is empty")
	}
	if c.Start == "" {
		c.Start = "current"
	}
	if c.BatchRows <= 0 {
		c.BatchRows = 5000
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = 16 << 20
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 200 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	if c.ServerID == 0 {
		h := fnv.New32a()
		h.Write([]byte(c.Source))
		c.ServerID = 1<<30 | h.Sum32()>>2
	}
	return nil
}

// Run captures until ctx is done or an error stops it. It waits for the
// source's lease first, so a second process for the same source takes over
// when the first dies. Holding it, it refuses (an *index.UnfinishedReindexError,
// Permanent) while a reindex of the source is unfinished: the
// restore takes the same lease for each of its steps, so neither can start
// while the other runs (see index.CheckNoReindex). The error tells whether
// a restart can help: see Permanent.
func Run(ctx context.Context, cfg Config, store *index.Store) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	log := cfg.Logger.With(slog.String("source", cfg.Source))
	src, err := openSource(ctx, cfg.SourceDSN)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := preflight(ctx, src, log); err != nil {
		return err
	}
	lease, err := store.AcquireLease(ctx, cfg.Source, func() {
		log.Info("another capture holds this source's lease; waiting to take over")
	})
	if err != nil {
		return fmt.Errorf("acquire capture lease: %w", err)
	}
	defer lease.Release()
	if err := store.CheckNoReindex(ctx, cfg.Source); err != nil {
		return fmt.Errorf("capture of %s: %w", cfg.Source, err)
	}
	log.Info("capture lease acquired", slog.String("flavor", src.flavor), slog.String("version", src.version))

	st, err := prepare(ctx, &cfg, store, src, lease, log)
	if err != nil {
		return err
	}
	return stream(ctx, &cfg, store, src, lease, st, log)
}

// startState is where streaming begins and what it knows there.
type startState struct {
	checkpoint change.Checkpoint
	tables     *tableTracker
}

func stream(ctx context.Context, cfg *Config, store *index.Store, src *sourceConn, lease *index.Lease, st *startState, log *slog.Logger) error {
	rows := newRowDecoder()
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		RowsEventDecodeFunc: rows.decodeHeader,
		ServerID:            cfg.ServerID, Flavor: src.flavor, Host: src.host, Port: src.port,
		User: src.cfg.User, Password: src.cfg.Passwd,
		ParseTime: false, UseDecimal: false, TimestampStringLocation: time.UTC,
		RenderJSONAsMySQLText: true, VerifyChecksum: true,
		// No ReadTimeout: rows.watch detects a silent source instead of a
		// socket deadline set for every packet.
		HeartbeatPeriod: time.Second,
		// go-mysql's own reconnect resumes at the last event read, which may
		// be inside a transaction; capture instead restarts from its
		// checkpoint, always a commit boundary.
		DisableRetrySync: true, FillZeroLogPos: src.flavor == mysql.MariaDBFlavor,
		EventCacheCount: streamerBuffer,
		Logger:          slog.New(levelFilter{h: log.Handler(), min: slog.LevelWarn}),
	})
	defer syncer.Close()
	cp := st.checkpoint
	streamer, err := syncer.StartSync(mysql.Position{Name: cp.BinlogFile, Pos: uint32(cp.BinlogPos)})
	if err != nil {
		return fmt.Errorf("start binlog stream at %s:%d: %w", cp.BinlogFile, cp.BinlogPos, err)
	}
	log.Info("capture streaming", slog.String("from", fmt.Sprintf("%s:%d", cp.BinlogFile, cp.BinlogPos)), slog.Uint64("last_seq", cp.LastSeq))

	g, gctx := errgroup.WithContext(ctx)
	// decoder → cut → packer → packed → writer: decoding, packing and the
	// index's inserts and commits overlap. The hand-overs hold as few
	// batches as keep the stages busy (cut none, packed one): every batch
	// in flight is memory (TestLargeTransactionBoundedMemory).
	cut, packed := make(chan *batch), make(chan *batch, 1)
	pk := newPacker()
	committed := make(chan struct{}, 1)
	w := &writer{store: store, source: cfg.Source, lease: lease, metrics: cfg.Metrics, committed: func(change.Checkpoint) {
		select {
		case committed <- struct{}{}:
		default:
		}
	}}
	g.Go(func() error { return pk.run(gctx, cut, packed) })
	g.Go(func() error { return w.run(gctx, packed) })
	g.Go(func() error { return sampleState(gctx, store, cfg.Source, committed, log) })
	g.Go(func() error { return watchLease(gctx, lease) })
	g.Go(func() error { return maintainPartitions(gctx, store, log) })
	g.Go(func() error { return rows.pump(gctx, streamer) })
	g.Go(func() error { return rows.watch(gctx, sourceSilence) })
	g.Go(func() error {
		defer close(cut)
		dec := newDecoder(cfg, src.flavor, st, log, func(b *batch) error {
			select {
			case cut <- b:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		})
		dec.packer = pk
		dec.body = rows.take
		if err := dec.gtidSet.load(src.flavor, cp.GTIDSet); err != nil {
			return err
		}
		return readLoop(gctx, cfg, rows.next, dec)
	})
	err = g.Wait()
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// sourceSilence is how long capture waits without any binlog event or
// heartbeat (sent every second) before it gives the connection up.
const sourceSilence = 30 * time.Second

func newDecoder(cfg *Config, flavor string, st *startState, log *slog.Logger, out func(*batch) error) *decoder {
	received := cfg.Metrics.EventsReceived.WithLabelValues(cfg.Source)
	return &decoder{
		source: cfg.Source, flavor: flavor, log: log, tables: st.tables, out: out,
		limits:  batchLimits{rows: cfg.BatchRows, bytes: cfg.BatchBytes, interval: cfg.FlushInterval},
		pos:     st.checkpoint.Pos().Coords(),
		lastSeq: st.checkpoint.LastSeq,
		last:    st.checkpoint,
		gtidSet: gtidTracker{flavor: flavor},
		received: func(n int) {
			received.Add(float64(n))
		},
	}
}

// readLoop feeds the decoder. When the stream is idle for the flush
// interval, complete transactions are flushed so the index stays fresh.
func readLoop(ctx context.Context, cfg *Config, next func(context.Context) (*replication.BinlogEvent, error), dec *decoder) error {
	lag := cfg.Metrics.Lag.WithLabelValues(cfg.Source)
	errs := cfg.Metrics.Errors
	wait := &readDeadline{parent: ctx}
	defer wait.reset()
	lastEvent := time.Now()
	for {
		ev, err := next(wait.until(lastEvent.Add(cfg.FlushInterval)))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, context.DeadlineExceeded) {
				wait.reset()
				if time.Since(lastEvent) < cfg.FlushInterval {
					continue // events came meanwhile: not idle
				}
				if !dec.tx.active {
					lag.Set(0)
				}
				if err := dec.flush(nil); err != nil {
					return err
				}
				if err := dec.moveIdleCheckpoint(); err != nil {
					return err
				}
				lastEvent = time.Now() // look again one interval later
				continue
			}
			errs.WithLabelValues(cfg.Source, "stream").Inc()
			return &transientError{fmt.Errorf("read binlog after %s: %w", dec.pos, err)}
		}
		now := time.Now()
		lastEvent = now
		if err := dec.handle(ev); err != nil {
			errs.WithLabelValues(cfg.Source, "decode").Inc()
			return err
		}
		if ts := ev.Header.Timestamp; ts != 0 {
			lag.Set(max(0, now.Sub(time.Unix(int64(ts), 0)).Seconds()))
		}
		if dec.due(now) {
			if err := dec.flush(nil); err != nil {
				return err
			}
		}
	}
}

// readDeadline is one context with a deadline that serves every read until
// it passes: a context per binlog event cost as much as decoding a one-row
// transaction.
type readDeadline struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
}

// until returns the current context, or a new one ending at deadline.
func (r *readDeadline) until(deadline time.Time) context.Context {
	if r.ctx == nil {
		r.ctx, r.cancel = context.WithDeadline(r.parent, deadline)
	}
	return r.ctx
}

// reset ends the current context; the next until makes a new one.
func (r *readDeadline) reset() {
	if r.cancel != nil {
		r.cancel()
	}
	r.ctx, r.cancel = nil, nil
}

// watchLease stops capture when the lease is lost (its connection died and
// another process may have taken over).
func watchLease(ctx context.Context, lease *index.Lease) error {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := lease.Check(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("capture lease: %w", err)
			}
		}
	}
}

// CaptureSampleEvery is how often capture records its state in the index
// (index.RecordCaptureSample): the console's lag and events/s plots.
const CaptureSampleEvery = 30 * time.Second

// sampleState records the source's checkpoint in the index at the start,
// at the first commit after it, and every CaptureSampleEvery, until ctx
// ends. A failed record is logged (the plots miss a point), not fatal.
func sampleState(ctx context.Context, store *index.Store, source string, committed <-chan struct{}, log *slog.Logger) error {
	record := func() {
		if err := store.RecordCaptureSample(ctx, source); err != nil && ctx.Err() == nil {
			log.Warn("cannot record capture's state for the console's plots", slog.String("error", err.Error()))
		}
	}
	t := time.NewTicker(CaptureSampleEvery)
	defer t.Stop()
	record()
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			record()
		case <-committed:
			if first {
				first = false
				record()
			}
		}
	}
}

// maintainPartitions keeps hourly partitions of the index's events ahead of
// the clock, so each hour's events land in their own partition for archive.
func maintainPartitions(ctx context.Context, store *index.Store, log *slog.Logger) error {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		if err := store.EnsurePartitions(ctx, time.Now(), index.DefaultAhead); err != nil && ctx.Err() == nil {
			// Events still land in p_future; archive will wait. Not fatal.
			log.Warn("cannot add future partitions to event_chunks", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// levelFilter drops go-mysql's chatty records below min.
type levelFilter struct {
	h   slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.h.Enabled(ctx, l)
}
func (f levelFilter) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }
func (f levelFilter) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFilter{h: f.h.WithAttrs(a), min: f.min}
}
func (f levelFilter) WithGroup(n string) slog.Handler {
	return levelFilter{h: f.h.WithGroup(n), min: f.min}
}
