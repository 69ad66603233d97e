package capture_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
)

// traffic runs mixed transactions on app.crash until stopped. Every change
// writes a fresh, unique version number, so each row event is identifiable.
type traffic struct {
	e       *env
	version atomic.Int64
	changes atomic.Int64 // rows changed by committed transactions
	stop    chan struct{}
	wg      sync.WaitGroup
	err     error
}

func startTraffic(e *env, big bool) *traffic {
	tr := &traffic{e: e, stop: make(chan struct{})}
	tr.wg.Add(1)
	go func() {
		defer tr.wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-tr.stop:
				return
			default:
			}
			if err := tr.tx(rng, big && rng.IntN(40) == 0); err != nil {
				tr.err = err
				return
			}
		}
	}()
	return tr
}

func (tr *traffic) halt(t *testing.T) {
	close(tr.stop)
	tr.wg.Wait()
	if tr.err != nil {
		t.Fatal(tr.err)
	}
}

// tx runs one transaction of 1..20 statements (or one large insert).
func (tr *traffic) tx(rng *rand.Rand, big bool) error {
	ctx := tr.e.ctx
	tx, err := tr.e.src.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int64
	exec := func(q string, args ...any) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		k, _ := res.RowsAffected()
		if strings.Contains(q, "ON DUPLICATE KEY") && k == 2 {
			k = 1 // an upsert that updated reports 2 affected rows for one row event
		}
		n += k
		return nil
	}
	if big {
		v := tr.version.Add(3000)
		if err := exec("INSERT INTO crash (id, ver, pad) SELECT 1000000 + ? + seq, ? + seq, REPEAT('b', 50) FROM seq_1_to_2000", v, v); err != nil {
			return err
		}
		if err := exec("DELETE FROM crash WHERE id > 1000000"); err != nil {
			return err
		}
	} else {
		for range 1 + rng.IntN(20) {
			v := tr.version.Add(1)
			id := rng.IntN(500)
			var err error
			switch rng.IntN(4) {
			case 0:
				err = exec("INSERT INTO crash (id, ver, pad) VALUES (?, ?, REPEAT('p', ?)) ON DUPLICATE KEY UPDATE ver = VALUES(ver)", id, v, rng.IntN(80))
			case 1:
				err = exec("UPDATE crash SET ver = ? WHERE id BETWEEN ? AND ?", v, id, id+3)
				tr.version.Add(4)
			case 2:
				err = exec("DELETE FROM crash WHERE id = ?", id)
			case 3:
				err = exec("INSERT INTO crash2 (k, ver) VALUES (?, ?) ON DUPLICATE KEY UPDATE ver = VALUES(ver)", fmt.Sprintf("k%03d", id%100), v)
			}
			if err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	tr.changes.Add(n)
	return nil
}

// rowEvent identifies one row image change independently of dbtrail.
type rowEvent struct {
	table string
	op    string
	ver   string
}

// binlogRowEvents reads the source binlog from start to its current end with
// a plain go-mysql syncer and lists the row changes of app's tables.
func binlogRowEvents(t *testing.T, e *env, start binlogpos.Position, tables map[string]int) []rowEvent {
	t.Helper()
	end := masterStatus(t, e)
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 999, Flavor: mysql.MariaDBFlavor, Host: "127.0.0.1", Port: uint16(e.source.Port),
		User: e.source.User, Password: e.source.Password,
	})
	defer syncer.Close()
	st, err := syncer.StartSync(mysql.Position{Name: start.File, Pos: uint32(start.Pos)})
	if err != nil {
		t.Fatal(err)
	}
	var out []rowEvent
	file := start.File
	for {
		ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
		ev, err := st.GetEvent(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := ev.Event.(*replication.RotateEvent); ok {
			file = string(r.NextLogName)
			continue
		}
		if re, ok := ev.Event.(*replication.RowsEvent); ok && string(re.Table.Schema) == "app" {
			verCol, ok := tables[string(re.Table.Table)]
			if ok {
				out = append(out, rowsOf(re, verCol)...)
			}
		}
		c, err := binlogpos.Compare(binlogpos.Position{File: file, Pos: uint64(ev.Header.LogPos)}, end)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Header.LogPos != 0 && c >= 0 {
			return out
		}
	}
}

func rowsOf(re *replication.RowsEvent, verCol int) []rowEvent {
	var out []rowEvent
	tbl := string(re.Table.Table)
	switch re.Type() {
	case replication.EnumRowsEventTypeInsert:
		for _, r := range re.Rows {
			out = append(out, rowEvent{tbl, "i", fmt.Sprint(r[verCol])})
		}
	case replication.EnumRowsEventTypeDelete:
		for _, r := range re.Rows {
			out = append(out, rowEvent{tbl, "d", fmt.Sprint(r[verCol])})
		}
	case replication.EnumRowsEventTypeUpdate:
		for i := 0; i < len(re.Rows); i += 2 {
			out = append(out, rowEvent{tbl, "u", fmt.Sprint(re.Rows[i+1][verCol])})
		}
	}
	return out
}

func masterStatus(t *testing.T, e *env) binlogpos.Position {
	t.Helper()
	var file string
	var pos uint64
	var a, b any
	if err := e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &a, &b); err != nil {
		t.Fatal(err)
	}
	return binlogpos.Position{File: file, Pos: pos}
}

// indexRowEvents lists the indexed changes of the tables in seq order, in the
// same form as binlogRowEvents.
func indexRowEvents(t *testing.T, e *env, tables ...string) []rowEvent {
	t.Helper()
	var all []rowEvent
	type seqEv struct {
		seq uint64
		ev  rowEvent
	}
	var evs []seqEv
	for _, tbl := range tables {
		for _, ev := range e.events(tbl) {
			img := ev.After
			if ev.Op == 'd' {
				img = ev.Before
			}
			evs = append(evs, seqEv{ev.Seq, rowEvent{tbl, string(ev.Op), jsonField(t, img, "ver")}})
		}
	}
	sortSeq(evs, func(a, b seqEv) bool { return a.seq < b.seq })
	for i, s := range evs {
		if i > 0 && s.seq == evs[i-1].seq {
			t.Fatalf("seq %d indexed twice", s.seq)
		}
		all = append(all, s.ev)
	}
	return all
}

const crashTables = `CREATE TABLE crash (id INT PRIMARY KEY, ver BIGINT NOT NULL, pad VARCHAR(100));
CREATE TABLE crash2 (k VARCHAR(20) PRIMARY KEY, ver BIGINT NOT NULL)`

// TestCrashKill9 kills capture with SIGKILL at random moments under
// continuous traffic; the index must end up with exactly the binlog's row
// events, each once, in binlog order.
func TestCrashKill9(t *testing.T) {
	e := newEnv(t)
	e.exec(splitSQL(crashTables)...)
	p := e.startCapture("--batch-rows=300")
	e.waitCaughtUp(p)
	start := masterStatus(t, e)
	tr := startTraffic(e, true)
	rng := rand.New(rand.NewPCG(7, 7))
	const kills = 12
	for i := range kills {
		time.Sleep(time.Duration(150+rng.IntN(1200)) * time.Millisecond)
		p.kill()
		t.Logf("kill %d: %d rows changed so far", i+1, tr.changes.Load())
		p = e.startCapture("--batch-rows=300")
	}
	time.Sleep(500 * time.Millisecond)
	tr.halt(t)
	e.waitCaughtUp(p)

	fromBinlog := binlogRowEvents(t, e, start, map[string]int{"crash": 1, "crash2": 1})
	fromIndex := indexRowEvents(t, e, "crash", "crash2")
	if int64(len(fromBinlog)) != tr.changes.Load() {
		t.Fatalf("binlog has %d row events, traffic changed %d rows", len(fromBinlog), tr.changes.Load())
	}
	if len(fromIndex) != len(fromBinlog) {
		t.Fatalf("index has %d row events, binlog %d", len(fromIndex), len(fromBinlog))
	}
	for i := range fromBinlog {
		if fromIndex[i] != fromBinlog[i] {
			t.Fatalf("event %d: index %+v, binlog %+v", i, fromIndex[i], fromBinlog[i])
		}
	}
	t.Logf("%d row events after %d kills: index equals binlog", len(fromIndex), kills)
}
