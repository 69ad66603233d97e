package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/testsuite"
)

// benchCapture writes a binlog of n row events on a real source, then reads
// it, in turns, with a bare go-mysql BinlogSyncer (read and decode, nothing
// else) and with dbtrail capture into a fresh index.
func benchCapture(ctx context.Context, n int) ([]result, error) {
	if err := testsuite.Install(ctx); err != nil {
		return nil, err
	}
	src, err := testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleSource})
	if err != nil {
		return nil, err
	}
	defer src.Stop()
	idx, err := testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleIndex})
	if err != nil {
		return nil, err
	}
	defer idx.Stop()
	start, end, err := writeWorkload(ctx, src, n)
	if err != nil {
		return nil, err
	}
	// Raw decode and capture take turns, three runs each, and the best of
	// each is compared: this machine's speed drifts by tens of percent
	// within a minute, and turns expose both to the same drift.
	var rawRate, capRate, bytesPerEvent float64
	var rawEvents int
	var capEvents int64
	var capCPU, idxCPU time.Duration
	var capRates []string
	for range 3 {
		r, n, err := rawDecode(ctx, src, start, end)
		if err != nil {
			return nil, err
		}
		rawRate, rawEvents = max(rawRate, r), n
		cpu0, idx0 := testsuite.ProcessCPUTime(), serverCPU(idx)
		c, events, bpe, err := captureInto(ctx, src, idx, start, end)
		if err != nil {
			return nil, err
		}
		if c > capRate {
			capRate, capEvents, bytesPerEvent = c, events, bpe
			capCPU, idxCPU = testsuite.ProcessCPUTime()-cpu0, serverCPU(idx)-idx0
		}
		capRates = append(capRates, fmt.Sprintf("%.0f", c))
	}
	if capEvents != int64(rawEvents) {
		return nil, fmt.Errorf("capture indexed %d events, the binlog has %d", capEvents, rawEvents)
	}
	ratio := capRate / rawRate
	return []result{
		{"capture: row events in binlog", fmt.Sprint(rawEvents), "", "insert/update/delete mix, 7 columns"},
		{"capture: raw BinlogSyncer read+decode", fmt.Sprintf("%.0f events/s", rawRate), "", "best of 3 runs, taking turns with capture"},
		{"capture: dbtrail capture into index", fmt.Sprintf("%.0f events/s", capRate), "", "binlog → images → index, checkpointed; best of 3 (" + strings.Join(capRates, ", ") + ")"},
		{"capture: ratio capture / raw", fmt.Sprintf("%.2f", ratio), "≥ 0.60", verdict(ratio >= 0.6)},
		{"capture: CPU per event, capture process / index server (best run)", fmt.Sprintf("%.2f µs / %.2f µs", perEvent(capCPU, capEvents), perEvent(idxCPU, capEvents)), "", "user + system; 2 cores shared by both"},
		{"capture: index bytes per event", fmt.Sprintf("%.0f B", bytesPerEvent), "", "data + indexes of event_chunks, per event"},
	}, nil
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

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// writeWorkload fills the source's binlog with n row events and returns the
// binlog range holding them.
func writeWorkload(ctx context.Context, src *testsuite.Server, n int) (start, end binlogpos.Position, err error) {
	if err = src.Exec(ctx, "CREATE DATABASE bench", `CREATE TABLE bench.t (
		id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(100), c DATETIME(6), d DECIMAL(12,2), e DOUBLE, f VARCHAR(200))`); err != nil {
		return
	}
	db, err := src.DB(ctx, "bench")
	if err != nil {
		return
	}
	defer db.Close()
	if start, err = masterPos(ctx, src); err != nil {
		return
	}
	inserts := n / 2
	const chunk = 5000
	for i := 0; i < inserts; i += chunk {
		if _, err = db.ExecContext(ctx, `INSERT INTO t SELECT seq, seq % 1000, CONCAT('name-', seq), '2026-11-29 08:00:00.123456' + INTERVAL seq SECOND,
			seq / 7, seq * 1.5, REPEAT('f', 20 + seq % 80) FROM seq_1_to_1000000 WHERE seq > ? AND seq <= ?`, i, min(i+chunk, inserts)); err != nil {
			return
		}
	}
	updates := n / 3
	for i := 0; i < updates; i += chunk {
		if _, err = db.ExecContext(ctx, "UPDATE t SET a = a + 1, b = CONCAT(b, 'u') WHERE id > ? AND id <= ?", i, min(i+chunk, updates)); err != nil {
			return
		}
	}
	deletes := n - inserts - updates
	if _, err = db.ExecContext(ctx, "DELETE FROM t WHERE id > ?", inserts-deletes); err != nil {
		return
	}
	end, err = masterPos(ctx, src)
	return
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
			file = string(e.NextLogName)
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

// captureInto runs dbtrail capture from start into a fresh index until its
// checkpoint reaches end.
func captureInto(ctx context.Context, src, idx *testsuite.Server, start, end binlogpos.Position) (rate float64, events int64, bytesPerEvent float64, err error) {
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
			return 0, 0, 0, cerr
		}
		if !ok {
			continue
		}
		if c, _ := binlogpos.Compare(binlogpos.Position{File: cp.BinlogFile, Pos: cp.BinlogPos}, end); c >= 0 {
			break
		}
	}
	elapsed := time.Since(began)
	cancel()
	<-done
	if events, err = store.CountEvents(ctx, "main"); err != nil {
		return
	}
	var size int64
	if _, err = store.DB().ExecContext(ctx, "ANALYZE TABLE event_chunks"); err != nil {
		return
	}
	err = store.DB().QueryRowContext(ctx, `SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'event_chunks'`).Scan(&size)
	return float64(events) / elapsed.Seconds(), events, float64(size) / float64(events), err
}
