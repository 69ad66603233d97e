package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/testsuite"
)

// captureWorkload is one workload of the capture benchmark: how its rows of
// the results are named and judged, and how it is written on the source.
type captureWorkload struct {
	// prefix begins the name of each of the workload's rows, e.g.
	// "capture (batch): ".
	prefix string
	// describe is the note of the row counting the workload's events.
	describe string
	// ratioTarget is the least capture/raw rate ratio that meets the target.
	ratioTarget float64
	// bytesTarget is the most index bytes per event that meets the target,
	// 0 for no target.
	bytesTarget float64
	// write fills the source's binlog with the workload and returns the
	// binlog range holding the measured row events and how many it holds.
	write func(ctx context.Context, src *testsuite.Server) (binlogRange, error)
}

// binlogRange is a range of a source's binlog, the number of row events
// (row images: one per inserted, updated or deleted row) it holds, and how
// long writing them took (setup such as an initial population excluded).
type binlogRange struct {
	start, end binlogpos.Position
	events     int
	written    time.Duration
}

// benchCapture measures capture on two workloads written on one real
// source: the batch workload of batchEvents row events (bulk statements on
// one table), the bulk-load workload of bulkEvents (multi-row INSERTs of
// wide TPC-C rows) and the interleaved OLTP workload of oltpEvents (short
// transactions switching between nine tables). A workload of 0 events is
// skipped.
func benchCapture(ctx context.Context, batchEvents, bulkEvents, oltpEvents int) ([]result, error) {
	src, idx, stop, err := startSourceAndIndex(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	var workloads []captureWorkload
	if batchEvents > 0 {
		workloads = append(workloads, batchWorkload(batchEvents))
	}
	if bulkEvents > 0 {
		workloads = append(workloads, bulkWorkload(bulkEvents))
	}
	if oltpEvents > 0 {
		workloads = append(workloads, oltpWorkload(oltpEvents))
	}
	var out []result
	for _, w := range workloads {
		rows, err := measureCapture(ctx, src, idx, w)
		if err != nil {
			return nil, fmt.Errorf("%sworkload: %w", w.prefix, err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// batchWorkload is writeBatchWorkload's n row events on one 7-column table.
func batchWorkload(n int) captureWorkload {
	return captureWorkload{
		prefix:      "capture (batch): ",
		describe:    "bulk insert/update/delete statements of 5000 rows, one table of 7 columns",
		ratioTarget: 0.70,
		write: func(ctx context.Context, src *testsuite.Server) (binlogRange, error) {
			return writeBatchWorkload(ctx, src, n)
		},
	}
}

// measureCapture writes w on src, then reads its binlog range, in turns,
// with a bare go-mysql BinlogSyncer (read and decode, nothing else) and
// with dbtrail capture into a fresh index on idx, and returns w's rows of
// the results. It fails when the binlog, the raw read and the index do not
// hold the same number of events.
func measureCapture(ctx context.Context, src, idx *testsuite.Server, w captureWorkload) ([]result, error) {
	rng, err := w.write(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	// Raw decode and capture take turns, three runs each, and the best of
	// each is compared: this machine's speed drifts by tens of percent
	// within a minute, and turns expose both to the same drift.
	var rawRate float64
	var best captureRun
	var cpu captureCPU
	var capRates []string
	for range 3 {
		raw0, rawSrc0 := testsuite.ProcessCPUTime(), serverCPU(src)
		var r float64
		var n int
		pprof.Do(ctx, pprof.Labels("part", "raw"), func(ctx context.Context) {
			r, n, err = rawDecode(ctx, src, rng.start, rng.end)
		})
		rawUsed, rawSrc := testsuite.ProcessCPUTime()-raw0, serverCPU(src)-rawSrc0
		if err != nil {
			return nil, fmt.Errorf("raw decode: %w", err)
		}
		if n != rng.events {
			return nil, fmt.Errorf("raw decode read %d row events, the workload wrote %d", n, rng.events)
		}
		if r > rawRate {
			rawRate, cpu.raw, cpu.rawSource = r, rawUsed, rawSrc
		}
		cpu0, idx0, src0 := testsuite.ProcessCPUTime(), serverCPU(idx), serverCPU(src)
		var run captureRun
		pprof.Do(ctx, pprof.Labels("part", "capture"), func(ctx context.Context) {
			run, err = captureInto(ctx, src, idx, rng.start, rng.end)
		})
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		if run.events != int64(rng.events) {
			return nil, fmt.Errorf("capture indexed %d events, the binlog has %d", run.events, rng.events)
		}
		if run.rate > best.rate {
			best = run
			cpu.capture, cpu.index, cpu.source = testsuite.ProcessCPUTime()-cpu0, serverCPU(idx)-idx0, serverCPU(src)-src0
		}
		capRates = append(capRates, fmt.Sprintf("%.0f", run.rate))
	}
	return captureRows(w, rng, rawRate, best, cpu, capRates), nil
}

// captureCPU is the CPU time of the processes of the capture benchmark's
// best runs: the bare reader's best run (this process, the source
// server) and capture's best run (this process, the index server, the
// source server).
type captureCPU struct {
	raw, rawSource         time.Duration
	capture, index, source time.Duration
}

// ceiling is the highest capture / raw ratio that cores allow at the CPU
// per event capture's best run of n events took (capture, index server and
// source together), with every core busy all the time: capture cannot
// reach more than cores / (CPU per event) events a second on this machine
// however well its stages overlap.
func (c captureCPU) ceiling(n int64, cores int, rawRate float64) float64 {
	us := c.perEvent(n)
	if us <= 0 || rawRate <= 0 {
		return 0
	}
	return float64(cores) / (us / 1e6) / rawRate
}

// perEvent is capture's best run's CPU per event of its n events in µs:
// capture, index server and source together.
func (c captureCPU) perEvent(n int64) float64 {
	return perEvent(c.capture+c.index+c.source, n)
}

// captureRows are the results of w: rng's events, read raw at rawRate,
// captured at best's rate, with the CPU the best runs took; capRates are
// the three capture runs' rates.
func captureRows(w captureWorkload, rng binlogRange, rawRate float64, best captureRun, cpu captureCPU, capRates []string) []result {
	cores := runtime.NumCPU()
	ratio := best.rate / rawRate
	ceiling := cpu.ceiling(best.events, cores, rawRate)
	bpe := best.bytesPerEvent()
	bytesRow := result{w.prefix + "index bytes per event", fmt.Sprintf("%.0f B", bpe), "", "data + indexes of event_chunks, per event"}
	if w.bytesTarget > 0 {
		bytesRow = judged(bytesRow.name, bytesRow.value, bytesRow.note, measured(bpe, atMost(w.bytesTarget, "%.0f")))
	}
	return []result{
		{w.prefix + "row events in binlog", fmt.Sprint(rng.events), "", fmt.Sprintf("%s; written in %.1f s", w.describe, rng.written.Seconds())},
		{w.prefix + "raw BinlogSyncer read+decode", fmt.Sprintf("%.0f events/s", rawRate), "", "best of 3 runs, taking turns with capture"},
		{w.prefix + "dbtrail capture into index", fmt.Sprintf("%.0f events/s", best.rate), "", "binlog → images → index, checkpointed; best of 3 (" + strings.Join(capRates, ", ") + ")"},
		judged(w.prefix+"ratio capture / raw", fmt.Sprintf("%.2f", ratio), "", measured(ratio, atLeast(w.ratioTarget, "%.2f"))),
		{w.prefix + "CPU per event, capture process / index server (best run)", fmt.Sprintf("%.2f µs / %.2f µs", perEvent(cpu.capture, best.events), perEvent(cpu.index, best.events)), "",
			fmt.Sprintf("user + system; %d cores shared by both; the raw reader's best run %.2f µs", cores, perEvent(cpu.raw, int64(rng.events)))},
		{w.prefix + "CPU per event, source server: raw read / capture (best runs)", fmt.Sprintf("%.2f µs / %.2f µs", perEvent(cpu.rawSource, int64(rng.events)), perEvent(cpu.source, best.events)), "",
			"the source's binlog dump thread (and anything else it ran meanwhile), user + system"},
		{w.prefix + "ceiling of capture / raw on this machine" + diagnosis, fmt.Sprintf("%.2f", ceiling), "",
			fmt.Sprintf("%d cores ÷ (capture + index server + source CPU per event, %.2f µs) ÷ the raw rate: the best ratio with every core busy all the time; %s",
				cores, cpu.perEvent(best.events), ceilingSays(ceiling, w.ratioTarget))},
		bytesRow,
		{w.prefix + "events per event_chunks row", fmt.Sprintf("%.1f", float64(best.packed)/float64(max(best.chunks, 1))), "", fmt.Sprintf("SUM(n) / COUNT(*) of event_chunks: %d events in %d rows", best.packed, best.chunks)},
		{w.prefix + "payload bytes per event", fmt.Sprintf("%.0f B", float64(best.payload)/float64(max(best.packed, 1))), "", "SUM(LENGTH(events)) / SUM(n) of event_chunks"},
	}
}

// startSourceAndIndex starts a source and an index server; stop stops
// both. On error nothing is left running.
func startSourceAndIndex(ctx context.Context) (src, idx *testsuite.Server, stop func(), err error) {
	if err = testsuite.Install(ctx); err != nil {
		return nil, nil, nil, err
	}
	if src, err = testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleSource}); err != nil {
		return nil, nil, nil, err
	}
	if idx, err = testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleIndex}); err != nil {
		src.Stop()
		return nil, nil, nil, err
	}
	return src, idx, func() { idx.Stop(); src.Stop() }, nil
}

// serverCPU is srv's CPU time so far, 0 when it cannot be read.
func serverCPU(srv *testsuite.Server) time.Duration {
	d, err := srv.CPUTime()
	if err != nil {
		slog.Warn("benchmark cannot read server CPU time", slog.String("error", err.Error()))
	}
	return d
}

func perEvent(d time.Duration, n int64) float64 {
	return float64(d.Nanoseconds()) / 1e3 / float64(max(n, 1))
}

// ceilingSays is a ceiling row's reading of ceiling against target: a
// diagnosis, never a verdict. The ceiling comes from the CPU the same run
// measured, so a CPU regression lowers it: below the target it says where
// the time went, not that the target is out of reach (the ratio row keeps
// its verdict). A ceiling of 0 or less means no CPU reading.
func ceilingSays(ceiling, target float64) string {
	switch {
	case !(ceiling > 0) || math.IsInf(ceiling, 0):
		return "diagnosis: no CPU reading, so no ceiling"
	case ceiling < target:
		return fmt.Sprintf("diagnosis, not a verdict: below the target %.2f at the CPU per event this run measured (more CPU per event than the cores give at the target; a CPU regression lowers this ceiling)", target)
	}
	return fmt.Sprintf("diagnosis, not a verdict: the target %.2f is within it", target)
}

// diagnosis is the name suffix of a ceiling row: a reading of the run's
// CPU, which no verdict rests on.
const diagnosis = " (diagnosis)"

// writeBatchWorkload fills the source's binlog with n row events of bulk
// statements on one table, bench.t (batchStatements).
func writeBatchWorkload(ctx context.Context, src *testsuite.Server, n int) (rng binlogRange, err error) {
	db, err := createBenchTable(ctx, src)
	if err != nil {
		return
	}
	defer db.Close()
	if rng.start, err = masterPos(ctx, src); err != nil {
		return
	}
	began := time.Now()
	if err = batchStatements(ctx, db, n); err != nil {
		return
	}
	rng.events, rng.written = n, time.Since(began)
	rng.end, err = masterPos(ctx, src)
	return
}

// createBenchTable creates bench.t on src and returns a pool on bench.
func createBenchTable(ctx context.Context, src *testsuite.Server) (*sql.DB, error) {
	if err := src.Exec(ctx, "CREATE DATABASE bench", `CREATE TABLE bench.t (
		id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(100), c DATETIME(6), d DECIMAL(12,2), e DOUBLE, f VARCHAR(200))`); err != nil {
		return nil, err
	}
	return src.DB(ctx, "bench")
}

// batchStatements writes n row events to bench.t with bulk statements:
// inserts of half of n rows, updates of a third, deletes of the rest, 5000
// rows a statement.
func batchStatements(ctx context.Context, db *sql.DB, n int) error {
	inserts := n / 2
	const chunk = 5000
	for i := 0; i < inserts; i += chunk {
		if _, err := db.ExecContext(ctx, `INSERT INTO t SELECT seq, seq % 1000, CONCAT('name-', seq), '2026-11-29 08:00:00.123456' + INTERVAL seq SECOND,
			seq / 7, seq * 1.5, REPEAT('f', 20 + seq % 80) FROM seq_1_to_1000000 WHERE seq > ? AND seq <= ?`, i, min(i+chunk, inserts)); err != nil {
			return err
		}
	}
	updates := n / 3
	for i := 0; i < updates; i += chunk {
		if _, err := db.ExecContext(ctx, "UPDATE t SET a = a + 1, b = CONCAT(b, 'u') WHERE id > ? AND id <= ?", i, min(i+chunk, updates)); err != nil {
			return err
		}
	}
	deletes := n - inserts - updates
	_, err := db.ExecContext(ctx, "DELETE FROM t WHERE id > ?", inserts-deletes)
	return err
}

func masterPos(ctx context.Context, src *testsuite.Server) (binlogpos.Position, error) {
	db, err := src.DB(ctx, "")
	if err != nil {
		return binlogpos.Position{}, err
	}
	defer db.Close()
	var p binlogpos.Position
	var a, b any
	err = db.QueryRowContext(ctx, "SHOW MASTER STATUS").Scan(&p.File, &p.Pos, &a, &b)
	return p, err
}

// rawDecode reads start..end with go-mysql alone, configured as capture
// configures it, and counts row images.
func rawDecode(ctx context.Context, src *testsuite.Server, start, end binlogpos.Position) (rate float64, events int, err error) {
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 4242, Flavor: mysql.MariaDBFlavor, Host: "127.0.0.1", Port: uint16(src.Port),
		User: src.User, Password: src.Password, TimestampStringLocation: time.UTC,
		RenderJSONAsMySQLText: true, VerifyChecksum: true, EventCacheCount: 256,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	defer syncer.Close()
	began := time.Now()
	st, err := syncer.StartSync(mysql.Position{Name: start.File, Pos: uint32(start.Pos)})
	if err != nil {
		return 0, 0, err
	}
	file := start.File
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return 0, 0, err
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			// Its LogPos is in the file it ends, not in the next one.
			file = string(e.NextLogName)
			continue
		case *replication.RowsEvent:
			if e.Type() == replication.EnumRowsEventTypeUpdate {
				events += len(e.Rows) / 2
			} else {
				events += len(e.Rows)
			}
		}
		if file == end.File && uint64(ev.Header.LogPos) >= end.Pos {
			return float64(events) / time.Since(began).Seconds(), events, nil
		}
	}
}

// captureRun is one run of capture into a fresh index.
type captureRun struct {
	rate    float64 // events per second from the start to the checkpoint reaching the end
	events  int64   // events the index counts
	size    int64   // DATA_LENGTH + INDEX_LENGTH of event_chunks
	chunks  int64   // rows of event_chunks
	packed  int64   // SUM(n) of event_chunks
	payload int64   // SUM(LENGTH(events)) of event_chunks
}

// bytesPerEvent is the index's size of event_chunks per event.
func (r captureRun) bytesPerEvent() float64 {
	return float64(r.size) / float64(max(r.events, 1))
}

// captureInto runs dbtrail capture from start into a fresh index until its
// checkpoint reaches end, then measures what the index holds.
func captureInto(ctx context.Context, src, idx *testsuite.Server, start, end binlogpos.Position) (run captureRun, err error) {
	if err = idx.Exec(ctx, "DROP DATABASE IF EXISTS bench_index", "CREATE DATABASE bench_index"); err != nil {
		return
	}
	store, err := index.Open(ctx, idx.DSN("bench_index"))
	if err != nil {
		return
	}
	defer store.Close()
	if err = store.Init(ctx); err != nil {
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	began := time.Now()
	go func() {
		done <- capture.Run(cctx, capture.Config{Source: "main", SourceDSN: src.DSN(""), Start: start.String(),
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}, store)
	}()
	for {
		select {
		case err = <-done:
			if err == nil {
				err = errors.New("capture stopped before reaching the end of the workload")
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		cp, ok, cerr := store.LoadCheckpoint(ctx, "main")
		if cerr != nil {
			return run, fmt.Errorf("load checkpoint: %w", cerr)
		}
		if !ok {
			continue
		}
		if c, _ := binlogpos.Compare(cp.Pos().Coords(), end); c >= 0 {
			break
		}
	}
	elapsed := time.Since(began)
	cancel()
	<-done
	if run.events, err = store.CountEvents(ctx, "main"); err != nil {
		return run, fmt.Errorf("count events: %w", err)
	}
	run.rate = float64(run.events) / elapsed.Seconds()
	err = indexStats(ctx, store, &run)
	return run, err
}

// indexStats fills run's size, chunks, packed and payload from store's
// event_chunks.
func indexStats(ctx context.Context, store *index.Store, run *captureRun) error {
	if _, err := store.DB().ExecContext(ctx, "ANALYZE TABLE event_chunks"); err != nil {
		return fmt.Errorf("analyze event_chunks: %w", err)
	}
	if err := store.DB().QueryRowContext(ctx, `SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'event_chunks'`).Scan(&run.size); err != nil {
		return fmt.Errorf("size of event_chunks: %w", err)
	}
	if err := store.DB().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(n), 0), COALESCE(SUM(LENGTH(events)), 0)
		FROM event_chunks`).Scan(&run.chunks, &run.packed, &run.payload); err != nil {
		return fmt.Errorf("count event_chunks: %w", err)
	}
	return nil
}
