package capture_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestDDLLabelsImages: a table created and filled at once, then altered
// between inserts, with a capture restart in the middle; every image carries
// the columns the table had when the row was written.
func TestDDLLabelsImages(t *testing.T) {
	e := newEnv(t)
	p := e.startCapture()
	e.waitCaughtUp(p)
	e.exec(
		"CREATE TABLE t1 (id INT PRIMARY KEY, a VARCHAR(10))",
		"INSERT INTO t1 VALUES (1, 'x')",
		"ALTER TABLE t1 ADD COLUMN b INT AFTER id",
		"INSERT INTO t1 VALUES (2, 5, 'y')",
	)
	e.waitCaughtUp(p)
	p.kill()
	e.exec(
		"ALTER TABLE t1 DROP COLUMN a",
		"INSERT INTO t1 VALUES (3, 6)",
	)
	p = e.startCapture()
	e.exec(
		"ALTER TABLE t1 MODIFY COLUMN b BIGINT UNSIGNED",
		"INSERT INTO t1 VALUES (4, 18446744073709551615)",
		"ALTER TABLE t1 CHANGE b c VARCHAR(30)",
		"UPDATE t1 SET c = 'z' WHERE id = 4",
		"CREATE TABLE t2 (k VARCHAR(5) PRIMARY KEY, v ENUM('on','off'), w SET('r','g','b'))",
		"INSERT INTO t2 VALUES ('a', 'off', 'r,b')",
		"ALTER TABLE t2 MODIFY v ENUM('off','on','auto')",
		"INSERT INTO t2 VALUES ('b', 'auto', 'g')",
		"RENAME TABLE t2 TO t3",
		"INSERT INTO t3 VALUES ('c', 'on', '')",
	)
	e.waitCaughtUp(p)

	want := map[string][]string{
		"t1": {
			`i  {"id":1,"a":"x"}`,
			`i  {"id":2,"b":5,"a":"y"}`,
			`i  {"id":3,"b":6}`,
			`i  {"id":4,"b":18446744073709551615}`,
			`u {"id":4,"c":"18446744073709551615"} {"id":4,"c":"z"}`,
		},
		"t2": {`i  {"k":"a","v":"off","w":"r,b"}`, `i  {"k":"b","v":"auto","w":"g"}`},
		"t3": {`i  {"k":"c","v":"on","w":""}`},
	}
	for table, lines := range want {
		evs := e.events(table)
		if len(evs) != len(lines) {
			t.Fatalf("%s: %d events, want %d", table, len(evs), len(lines))
		}
		for i, ev := range evs {
			got := fmt.Sprintf("%c %s %s", ev.Op, ev.Before, ev.After)
			if got != lines[i] {
				t.Errorf("%s event %d:\n got  %s\n want %s", table, i, got, lines[i])
			}
		}
	}
}

// TestLargeTransactionBoundedMemory: one transaction of 200k rows (about
// 120 MB of images) is captured whole, with the capture process's peak RSS
// far below the transaction's size.
func TestLargeTransactionBoundedMemory(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(600))")
	p := e.startCapture()
	e.waitCaughtUp(p)
	base := peakRSS(t, p.cmd.Process.Pid)
	e.exec("INSERT INTO big SELECT seq, REPEAT(CHAR(65 + seq % 26), 500) FROM seq_1_to_200000")
	end := masterStatus(t, e)
	e.waitCaughtUp(p)
	peak := peakRSS(t, p.cmd.Process.Pid)
	n, err := e.store.CountEvents(e.ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if n != 200000 {
		t.Fatalf("indexed %d events, want 200000", n)
	}
	var bad int
	for _, ev := range e.events("big") {
		if ev.EndPos != end.Pos || ev.BinlogFile != end.File {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d events do not carry their transaction's end position %s", bad, end)
	}
	// The images alone are ~110 MiB; the process's peak may grow by a few
	// batches (5000 rows each) over what it needed before the transaction.
	t.Logf("capture peak RSS %d MiB before, %d MiB after a 200k-row transaction", base>>20, peak>>20)
	if peak-base > 80<<20 {
		t.Fatalf("capture peak RSS grew by %d MiB: memory grows with the transaction", (peak-base)>>20)
	}
}

// peakRSS reads VmHWM of a running process.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	peak, err := testsuite.PeakRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return peak
}

// TestLeaseTakeover: a second capture waits while the first holds the
// lease, takes over when the first is killed, and the index has every row
// event once. The metrics endpoint reports progress.
func TestLeaseTakeover(t *testing.T) {
	e := newEnv(t)
	e.exec(splitSQL(crashTables)...)
	p1 := e.startCapture()
	e.waitCaughtUp(p1)
	start := masterStatus(t, e)
	addr := freeAddr(t)
	p2 := e.startCapture("--metrics-addr=" + addr)
	waitOutput(t, p2, "waiting to take over", 30*time.Second)
	tr := startTraffic(e, false)
	time.Sleep(time.Second)
	p1.kill()
	time.Sleep(time.Second)
	tr.halt(t)
	e.waitCaughtUp(p2)
	if p2.exited() {
		t.Fatalf("second capture exited: %s", p2.output())
	}
	fromBinlog := binlogRowEvents(t, e, start, map[string]int{"crash": 1, "crash2": 1})
	fromIndex := indexRowEvents(t, e, "crash", "crash2")
	if len(fromIndex) != len(fromBinlog) || int64(len(fromBinlog)) != tr.changes.Load() {
		t.Fatalf("index %d, binlog %d, traffic %d row events", len(fromIndex), len(fromBinlog), tr.changes.Load())
	}
	for i := range fromBinlog {
		if fromIndex[i] != fromBinlog[i] {
			t.Fatalf("event %d: index %+v, binlog %+v", i, fromIndex[i], fromBinlog[i])
		}
	}
	metrics := httpGet(t, "http://"+addr+"/metrics")
	for _, name := range []string{"dbtrail_capture_events_received_total", "dbtrail_capture_events_indexed_total",
		"dbtrail_capture_lag_seconds", "dbtrail_capture_last_commit_timestamp_seconds", "dbtrail_capture_last_checkpoint_timestamp_seconds"} {
		if !strings.Contains(metrics, name+`{source="main"}`) {
			t.Errorf("metrics lack %s", name)
		}
	}
}

// TestGapIsReportedAndRefused: the binlog the checkpoint points into is
// purged while capture is down; capture records the gap and refuses to go
// on until told to.
func TestGapIsReportedAndRefused(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE g (id INT PRIMARY KEY)")
	p := e.startCapture()
	e.waitCaughtUp(p)
	cp := e.waitCaughtUp(p)
	p.kill()
	e.exec("INSERT INTO g VALUES (1)", "FLUSH BINARY LOGS", "INSERT INTO g VALUES (2)", "FLUSH BINARY LOGS")
	newest := masterStatus(t, e)
	purgeTo(t, e, newest.File)
	e.exec("INSERT INTO g VALUES (3)")

	p = e.startCapture()
	err := p.waitExit(t, time.Minute)
	if err == nil || !strings.Contains(p.output(), "capture gap") || !strings.Contains(p.output(), "--continue-past-gap") {
		t.Fatalf("capture must stop on the gap with advice; err %v, output:\n%s", err, p.output())
	}
	gaps, gerr := e.store.Gaps(e.ctx, "main")
	if gerr != nil || len(gaps) != 1 || gaps[0].FromFile != cp.BinlogFile || gaps[0].ToFile != newest.File {
		t.Fatalf("gaps = %+v, %v; want one from %s to %s", gaps, gerr, cp.BinlogFile, newest.File)
	}
	p = e.startCapture("--continue-past-gap")
	e.waitCaughtUp(p)
	evs := e.events("g")
	if len(evs) != 1 || string(evs[0].After) != `{"id":3}` {
		t.Fatalf("after the gap the index has %d events of g, want only id 3", len(evs))
	}
	if gaps, _ := e.store.Gaps(e.ctx, "main"); len(gaps) != 1 {
		t.Fatalf("the gap was recorded %d times", len(gaps))
	}
}

// TestPreflightRefusesStatementFormat: a source that does not log row images
// is refused with the setting and the fix.
func TestPreflightRefusesStatementFormat(t *testing.T) {
	e := newEnv(t, "--binlog-format=STATEMENT")
	p := e.startCapture()
	err := p.waitExit(t, time.Minute)
	out := p.output()
	if err == nil || !strings.Contains(out, "binlog_format") || !strings.Contains(out, "ROW") || !strings.Contains(out, "fix:") {
		t.Fatalf("want a refusal naming binlog_format and the fix; err %v, output:\n%s", err, out)
	}
}

func waitOutput(t *testing.T, p *proc, s string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if strings.Contains(p.output(), s) {
			return
		}
		if p.exited() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("output never showed %q:\n%s", s, p.output())
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// purgeTo purges binlogs before file and waits until file is the oldest
// listed: a dump thread of a killed replica can hold one open for a while,
// and PURGE then skips it.
func purgeTo(t *testing.T, e *env, file string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		e.exec("PURGE BINARY LOGS TO '" + file + "'")
		rows, err := e.src.QueryContext(e.ctx, "SHOW BINARY LOGS")
		if err != nil {
			t.Fatal(err)
		}
		oldest := ""
		for rows.Next() {
			var name string
			var size any
			cols, _ := rows.Columns()
			dest := []any{&name, &size}
			for len(dest) < len(cols) {
				dest = append(dest, new(any))
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			if oldest == "" {
				oldest = name
			}
		}
		rows.Close()
		if oldest == file {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("binlogs before %s still listed after PURGE BINARY LOGS TO %s", file, file)
}
