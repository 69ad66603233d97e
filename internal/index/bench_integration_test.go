package index

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// BenchmarkInsertEvents measures capture's write path: one index transaction
// per 1000-event batch (events + checkpoint, commit), ~300-byte images. It
// reports rows/s and the table's bytes per stored event (data + index length
// over events, after ANALYZE).
func BenchmarkInsertEvents(b *testing.B) {
	srv := testsuite.StartIndex(b)
	ctx := context.Background()
	const batch = 1000
	img := `{"id":123456,"name":"` + strings.Repeat("x", 200) + `","price":"12.50","updated":"2026-01-02 03:04:05"}`
	mkBatch := func(seq *uint64) []change.Event {
		evs := make([]change.Event, batch)
		now := time.Now()
		for i := range evs {
			*seq++
			e := change.Event{Seq: *seq, CommitTime: now, BinlogFile: "mariadb-bin.000042", EndPos: 4 + *seq*10,
				GTID: fmt.Sprintf("0-1-%d", *seq), Schema: "shop", Table: "orders", Op: change.OpUpdate,
				PK: fmt.Sprintf("[%d]", *seq%100000), SchemaVersion: 1, Before: []byte(img), After: []byte(img)}
			evs[i] = e
		}
		return evs
	}
	run := func(b *testing.B, db string) {
		s := openStore(b, srv, db)
		var seq uint64
		var cliCPU time.Duration
		srv0, srvErr := srv.CPUTime()
		b.ResetTimer()
		for b.Loop() {
			b.StopTimer()
			evs := mkBatch(&seq)
			b.StartTimer()
			c0 := testsuite.ProcessCPUTime()
			tx, err := s.Begin(ctx, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := tx.InsertEvents(ctx, evs); err != nil {
				b.Fatal(err)
			}
			if err := tx.SaveCheckpoint(ctx, change.Checkpoint{BinlogFile: "mariadb-bin.000042", BinlogPos: seq * 10, LastSeq: seq}); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			cliCPU += testsuite.ProcessCPUTime() - c0
		}
		b.StopTimer()
		rowsN := float64(b.N * batch)
		b.ReportMetric(rowsN/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(cliCPU.Microseconds())/rowsN, "client-µs/row")
		if srv1, err := srv.CPUTime(); srvErr == nil && err == nil {
			b.ReportMetric(float64((srv1-srv0).Microseconds())/rowsN, "server-µs/row")
		}
		if _, err := s.DB().ExecContext(ctx, "ANALYZE TABLE event_chunks"); err != nil {
			b.Fatal(err)
		}
		var bytes, rows float64
		if err := s.DB().QueryRowContext(ctx, `SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'event_chunks'`).Scan(&bytes); err != nil {
			b.Fatal(err)
		}
		if err := s.DB().QueryRowContext(ctx, "SELECT SUM(n) FROM event_chunks").Scan(&rows); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(bytes/rows, "bytes/event")
	}
	run(b, "dbtrail_bench")
}
