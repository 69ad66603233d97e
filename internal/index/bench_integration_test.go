package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// BenchmarkInsertEvents measures capture's write path: one index transaction
// per 1000-event batch (events + checkpoint, commit), ~300-byte images. It
// reports rows/s and the table's bytes per stored event (data + index length
// over rows, after ANALYZE). "prepared" is InsertEvents as it is; "text"
// sends every row as built, escaped INSERT text, the alternative it was
// measured against (the server spends ~40% more CPU parsing literals).
func BenchmarkInsertEvents(b *testing.B) {
	srv := testsuite.StartIndex(b)
	ctx := context.Background()
	const batch = 1000
	img := `{"id":123456,"name":"` + strings.Repeat("x", 200) + `","price":"12.50","updated":"2026-01-02 03:04:05"}`
	mkBatch := func(seq *uint64) []Event {
		evs := make([]Event, batch)
		now := time.Now()
		for i := range evs {
			*seq++
			e := Event{Seq: *seq, CommitTime: now, BinlogFile: "mariadb-bin.000042", EndPos: 4 + *seq*10,
				GTID: fmt.Sprintf("0-1-%d", *seq), Schema: "shop", Table: "orders", Op: OpUpdate,
				PK: fmt.Sprint(*seq % 100000), SchemaVersion: 1, Before: []byte(img), After: []byte(img)}
			evs[i] = e
		}
		return evs
	}
	run := func(b *testing.B, db string, text bool) {
		s := openStore(b, srv, db)
		s.forceText = text
		var seq uint64
		var cliCPU time.Duration
		srv0 := serverCPU(srv)
		b.ResetTimer()
		for b.Loop() {
			b.StopTimer()
			evs := mkBatch(&seq)
			b.StartTimer()
			c0 := processCPU()
			tx, err := s.Begin(ctx, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := tx.InsertEvents(ctx, evs); err != nil {
				b.Fatal(err)
			}
			if err := tx.SaveCheckpoint(ctx, Checkpoint{BinlogFile: "mariadb-bin.000042", BinlogPos: seq * 10, LastSeq: seq}); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			cliCPU += processCPU() - c0
		}
		b.StopTimer()
		rowsN := float64(b.N * batch)
		b.ReportMetric(rowsN/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(cliCPU.Microseconds())/rowsN, "client-µs/row")
		if srv1 := serverCPU(srv); srv0 >= 0 && srv1 >= 0 {
			b.ReportMetric(float64((srv1-srv0).Microseconds())/rowsN, "server-µs/row")
		}
		if _, err := s.DB().ExecContext(ctx, "ANALYZE TABLE events"); err != nil {
			b.Fatal(err)
		}
		var bytes, rows float64
		if err := s.DB().QueryRowContext(ctx, `SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'events'`).Scan(&bytes); err != nil {
			b.Fatal(err)
		}
		if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM events").Scan(&rows); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(bytes/rows, "bytes/event")
	}
	b.Run("prepared", func(b *testing.B) { run(b, "dbtrail_bench", false) })
	b.Run("text", func(b *testing.B) { run(b, "dbtrail_bench_text", true) })
}

// processCPU is the CPU time (user + system) of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the CPU time of srv's mariadbd from /proc (Linux; -1 when it
// cannot be read). Ticks are taken as 1/100 s, the Linux USER_HZ.
func serverCPU(srv *testsuite.Server) time.Duration {
	pid, err := os.ReadFile(filepath.Join(srv.Dir, "mariadbd.pid"))
	if err != nil {
		return -1
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
	if err != nil {
		return -1
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields from 3 (state) on
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	k, err2 := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(u+k) * 10 * time.Millisecond
}
