package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/payload"
)

// tailTables are the live tail test's tables: two keyed tables every
// transfer touches together, and a keyless one (folded into a table file).
var tailTables = []string{"acct", "ledger", "tags"}

// tailWriter runs random multi-table transactions on one connection and
// records the source's tables after each commit, by its GTID.
type tailWriter struct {
	e     *backupEnv
	r     *rand.Rand
	conn  *sql.Conn
	accts []int
	next  int

	mu    sync.Mutex
	truth map[string]map[string][]string // GTID → table → sorted rows
	last  string                         // GTID of the last commit
	txns  int
}

// txn runs one random transaction: a transfer between two accounts with
// its ledger row, and at random a key change, a ledger delete, a new
// account, a keyless row added or removed.
func (w *tailWriter) txn(ctx context.Context) error {
	tx, err := w.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%s %v: %w", q, args, err)
		}
		return nil
	}
	w.next++
	a, b := w.accts[w.r.IntN(len(w.accts))], w.accts[w.r.IntN(len(w.accts))]
	amt := w.r.IntN(100) + 1
	steps := []func() error{
		func() error { return exec("UPDATE acct SET bal = bal - ? WHERE id = ?", amt, a) },
		func() error {
			return exec("UPDATE acct SET bal = bal + ?, note = ? WHERE id = ?", amt, fmt.Sprintf("t%d", w.next), b)
		},
		func() error {
			return exec("INSERT INTO ledger (id, src, dst, amount) VALUES (?, ?, ?, ?)", w.next, a, b, amt)
		},
	}
	var moved [2]int
	switch w.r.IntN(6) {
	case 0: // the key of an account changes
		i := w.r.IntN(len(w.accts))
		moved = [2]int{i, 100000 + w.next}
		old := w.accts[i]
		steps = append(steps, func() error { return exec("UPDATE acct SET id = ? WHERE id = ?", moved[1], old) })
	case 1:
		steps = append(steps, func() error { return exec("DELETE FROM ledger WHERE id < ? ORDER BY id LIMIT 1", w.next-20) })
	case 2:
		steps = append(steps, func() error { return exec("INSERT INTO acct VALUES (?, 0, NULL)", 200000+w.next) })
	case 3:
		steps = append(steps, func() error { return exec("INSERT INTO tags VALUES (?, ?)", w.r.IntN(3), "x") })
	case 4:
		steps = append(steps, func() error { return exec("DELETE FROM tags WHERE a = ? LIMIT 1", w.r.IntN(3)) })
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if moved[1] != 0 {
		w.accts[moved[0]] = moved[1]
	}
	var gtid string
	if err := w.conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&gtid); err != nil {
		return err
	}
	state := map[string][]string{}
	for _, tb := range tailTables {
		rows, err := w.conn.QueryContext(ctx, "SELECT * FROM "+tb)
		if err != nil {
			return err
		}
		if state[tb], err = rowTexts(rows); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.truth[gtid], w.last = state, gtid
	w.txns++
	w.mu.Unlock()
	return nil
}

// at returns the recorded tables at gtid.
func (w *tailWriter) at(gtid string) (map[string][]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.truth[gtid]
	return s, ok
}

// rowTexts reads rows as sorted text lines ("NULL" for NULL), from MariaDB
// (bytes) or DuckDB (Go values) alike.
func rowTexts(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				parts[i] = "NULL"
			case []byte:
				parts[i] = string(v)
			default:
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out, rows.Err()
}

// tailQuery opens a query session the way `dbtrail query` does (with the
// tail unless off, reading and extending cache when not nil) and reads
// every table; it returns the rows and the tail's state (nil with the tail
// off).
func tailQuery(t *testing.T, e *backupEnv, withTail bool, cache *tail.Cache) (map[string][]string, *tail.State, string) {
	t.Helper()
	s, st := openModelSession(t, e, withTail, cache)
	defer s.Close()
	return readTailTables(t, e, s), *st, s.Snapshot()
}

// openModelSession opens a views session over e's backups (with the live
// tail through cache when withTail) and returns it with where the tail
// its last load prepared is.
func openModelSession(t *testing.T, e *backupEnv, withTail bool, cache *tail.Cache) (*views.Session, **tail.State) {
	t.Helper()
	o := views.SessionOptions{Options: views.Options{SourceDir: filepath.Join(e.acts.BackupDir, "main"), Raw: true},
		MemoryLimit: "256MB", Threads: 1}
	st := new(*tail.State)
	if withTail {
		r := &tail.Reader{Past: moment.Past{Source: "main", Index: e.store, SourceDir: o.SourceDir}, Cache: cache}
		o.Tail = func(ctx context.Context, dir string) (*views.Tail, error) {
			prepared, err := r.Prepare(ctx, dir)
			if err != nil {
				return nil, err
			}
			*st = prepared
			return prepared.Views, nil
		}
	}
	s, err := views.OpenSession(e.ctx, o)
	must(t, err)
	return s, st
}

// readTailTables reads every table of the model through s.
func readTailTables(t *testing.T, e *backupEnv, s *views.Session) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for _, tb := range tailTables {
		rows, _, err := s.Query(e.ctx, "SELECT * FROM app."+tb)
		must(t, err)
		var err2 error
		if got[tb], err2 = rowTexts(rows); err2 != nil {
			t.Fatalf("read app.%s: %v", tb, err2)
		}
	}
	return got
}

// sameTables compares a session's answer with the recorded tables.
func sameTables(got, want map[string][]string) error {
	for _, tb := range tailTables {
		if !slices.Equal(got[tb], want[tb]) {
			return fmt.Errorf("app.%s: %d rows %v, want %d rows %v", tb, len(got[tb]), head(got[tb]), len(want[tb]), head(want[tb]))
		}
	}
	return nil
}

// TestTailModel: a writer runs random transactions over three tables (a
// transfer updates two accounts and inserts its ledger row in one
// transaction; keys change; a keyless table gains and loses copies) while
// queries read every table through the live tail, and refreshes publish
// snapshots with chains under them. Every answer equals the source right
// after the transaction the tail names as its cut (so a transaction is in
// every table or in none); with traffic paused the cut is the last commit.
// The answers share a tail cache (tail.Cache, as a serve process or the
// query shell does): a question stages only the changes after the cached
// ones, also across an index made and a column added between questions,
// and a new snapshot.
// `dbtrail query` (the binary) prints the cut's GTID, and the views.sql of
// `dbtrail views --tail-dir` answers at it in a DuckDB. With --tail off the
// answer is the snapshot's. A column added stays live; after a type change
// that converts values the tail falls back to the
// snapshot, naming the schema change.
func TestTailModel(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t)
	for _, q := range []string{
		"CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL, note VARCHAR(20) NULL)",
		"CREATE TABLE ledger (id INT PRIMARY KEY, src INT, dst INT, amount INT)",
		"CREATE TABLE tags (a INT, b VARCHAR(5))",
		"INSERT INTO acct VALUES (1, 1000, NULL), (2, 1000, 'x'), (3, 1000, NULL), (4, 1000, 'y'), (5, 1000, NULL)",
		"INSERT INTO tags VALUES (1, 'x'), (1, 'x'), (2, NULL)",
	} {
		e.exec(t, q)
	}
	conn, err := e.src.Conn(e.ctx)
	must(t, err)
	defer conn.Close()
	w := &tailWriter{e: e, r: rand.New(rand.NewPCG(23, 1)), conn: conn, accts: []int{1, 2, 3, 4, 5}, next: 10,
		truth: map[string]map[string][]string{}}
	must(t, w.txn(e.ctx))
	e.waitCaughtUp(t)
	e.fullBackup(t)

	// Concurrent traffic: queries cut wherever capture is.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	werr := make(chan error, 1)
	pause := make(chan chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case resume := <-pause:
				<-resume
			default:
			}
			if err := w.txn(e.ctx); err != nil {
				werr <- err
				return
			}
			time.Sleep(time.Duration(w.r.IntN(20)) * time.Millisecond)
		}
	}()
	quiet := func(fn func()) {
		resume := make(chan struct{})
		pause <- resume
		defer close(resume)
		e.waitCaughtUp(t)
		fn()
	}
	cache, err := tail.NewCache(t.TempDir(), 64<<20)
	must(t, err)
	defer cache.Close()
	cache.MaxSegments = 2 // join (and fold) a table's segments every third question
	cachedAnswers := 0
	// Even rounds ask one session kept across the rounds (as the shell and
	// the SQL port do: its overlays fold only the new window files), odd
	// rounds a new session each.
	kept, keptState := openModelSession(t, e, true, cache)
	defer kept.Close()
	keptFiles := 0 // the window files of the kept session's questions
	check := func(round int) *tail.State {
		var got map[string][]string
		var st *tail.State
		if round%2 == 0 {
			_, err := kept.Reload(e.ctx)
			must(t, err)
			got, st = readTailTables(t, e, kept), *keptState
			for _, w := range st.Views.Windows {
				keptFiles += len(w.Paths)
			}
		} else {
			got, st, _ = tailQuery(t, e, true, cache)
		}
		if st.Cached > 0 {
			cachedAnswers++
		}
		if !st.Live {
			t.Fatalf("round %d: the tail fell back: %s", round, st)
		}
		gtid := st.Cut.Txn.Position.GTID
		if st.Events == 0 {
			gtid = st.Position.GTID
		}
		// The writer records a commit right after it (reading the
		// tables): a cut on the newest commit may come first.
		want, ok := w.at(gtid)
		for deadline := time.Now().Add(10 * time.Second); !ok && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			want, ok = w.at(gtid)
		}
		if !ok {
			t.Fatalf("round %d: the cut names GTID %q, which no recorded commit has (%s)", round, gtid, st)
		}
		if err := sameTables(got, want); err != nil {
			t.Fatalf("round %d: %s: %v", round, st, err)
		}
		return st
	}
	live, windows, chained := 0, 0, 0
	for round := 1; round <= 30; round++ {
		select {
		case err := <-werr:
			t.Fatalf("writer: %v", err)
		default:
		}
		st := check(round)
		live++
		if st.Events > 0 && len(st.Views.Windows) > 0 {
			windows++
			snap, err := snapshot.OpenSnapshot(filepath.Join(e.acts.BackupDir, "main", snapshot.SnapshotsDir, st.Snapshot))
			must(t, err)
			for name := range st.Views.Windows {
				schemaName, table, _ := strings.Cut(name, ".")
				if mt, ok := snap.Manifest.Table(schemaName, table); ok && len(mt.Chain) > 2 {
					chained++ // the window applies after pairs of a refresh
					break
				}
			}
		}
		switch {
		case round == 7 || round == 13:
			// A schema change between questions: an index (the windows
			// cached go on), a column (the table is staged whole, in its
			// new shape, until the next snapshot folds it).
			ddl := map[int]string{7: "CREATE INDEX acct_bal ON acct (bal)", 13: "ALTER TABLE ledger ADD COLUMN memo2 INT NULL"}[round]
			quiet(func() {
				e.exec(t, ddl)
				must(t, w.txn(e.ctx))
				e.waitCaughtUp(t)
				check(round)
			})
		case round%10 == 5:
			quiet(func() {
				st := check(round)
				w.mu.Lock()
				last := w.last
				w.mu.Unlock()
				if st.Cut.Txn.Position.GTID != last && st.Position.GTID != last {
					t.Fatalf("round %d: traffic paused after %s, the tail is cut at %s", round, last, st)
				}
			})
		case round%10 == 0:
			if res := e.refresh(t, payload.RefreshInput{TableDeltas: true}); res.Refused || res.SnapshotID == "" {
				t.Fatalf("round %d: refresh: %+v", round, res)
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d transactions, %d answers through the tail (%d with windows, %d of them after a chain, %d read cached windows, %d joins of a table's segments) equal to the source at their cut; the kept session read %d of its windows' %d files into its overlays",
		w.txns, live, windows, chained, cachedAnswers, cache.Joins(), kept.OverlayReads(), keptFiles)
	if windows == 0 || chained == 0 || cachedAnswers == 0 || cache.Joins() == 0 {
		t.Fatalf("%d answers read a window, %d after a chain, %d cached windows, %d joined segments: want all", windows, chained, cachedAnswers, cache.Joins())
	}
	if kept.OverlayReads() == 0 || kept.OverlayReads() >= keptFiles {
		t.Fatalf("the kept session read %d window files into its overlays for %d files of its windows: want fewer, not none", kept.OverlayReads(), keptFiles)
	}

	// Traffic stopped: the binary names the last commit; --tail=false
	// reads the snapshot alone.
	e.waitCaughtUp(t)
	out, errText := runQuery(t, e, bin, "SELECT count(*) AS n, sum(bal) AS s FROM app.acct")
	want := liveCSV(t, e, "n,s", "SELECT COUNT(*), SUM(bal) FROM acct")
	if out != want || !strings.Contains(errText, "GTID "+w.last) {
		t.Fatalf("dbtrail query with the tail: %q (want %q), stderr %q (want the GTID %s)", out, want, errText, w.last)
	}
	// The same cut for a DuckDB CLI: dbtrail views --tail-dir.
	tailDir := filepath.Join(t.TempDir(), "tail")
	cmd := exec.CommandContext(e.ctx, bin, "views", "--backup-dir", e.acts.BackupDir, "--tail-dir", tailDir)
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	printed, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(printed), "GTID "+w.last) {
		t.Fatalf("dbtrail views --tail-dir: %v\n%s", err, printed)
	}
	text, err := os.ReadFile(filepath.Join(tailDir, "views.sql"))
	must(t, err)
	duck := openDuck(t)
	_, err = duck.ExecContext(e.ctx, string(text))
	must(t, err)
	fromFile := map[string][]string{}
	for _, tb := range tailTables {
		rows, err := duck.QueryContext(e.ctx, "SELECT * FROM app."+tb)
		must(t, err)
		fromFile[tb], err = rowTexts(rows)
		must(t, err)
	}
	if want, _ := w.at(w.last); sameTables(fromFile, want) != nil {
		t.Fatalf("views.sql of --tail-dir: %v", sameTables(fromFile, want))
	}
	got, _, snapID := tailQuery(t, e, false, nil)
	cur := e.current(t)
	if want, ok := w.at(cur.Manifest.Position.GTID); !ok || sameTables(got, want) != nil {
		t.Fatalf("--tail=false: snapshot %s (GTID %s): %v", snapID, cur.Manifest.Position.GTID, sameTables(got, want))
	}
	out, errText = runQuery(t, e, bin, "--tail=false", "SELECT count(*) AS n FROM app.ledger")
	if !strings.Contains(errText, "snapshot "+cur.Manifest.SnapshotID) || !strings.Contains(errText, "no tail") {
		t.Fatalf("dbtrail query --tail=false: stderr %q", errText)
	}
	t.Logf("--tail=false: %s", strings.TrimSpace(errText))

	// A column added after the snapshot is folded: the tail stays live,
	// in the new shape.
	e.exec(t, "ALTER TABLE ledger ADD COLUMN memo VARCHAR(10) NULL")
	must(t, w.txn(e.ctx))
	e.waitCaughtUp(t)
	got, st, _ := tailQuery(t, e, true, nil)
	if !st.Live {
		t.Fatalf("after ADD COLUMN: %s", st)
	}
	if want, ok := w.at(w.last); !ok || sameTables(got, want) != nil {
		t.Fatalf("after ADD COLUMN, the tail's answer: %v", sameTables(got, want))
	}
	// A schema change the fold cannot prove (a type that converts values):
	// the tail falls back to the snapshot and says why.
	e.exec(t, "ALTER TABLE ledger MODIFY amount VARCHAR(20)")
	must(t, w.txn(e.ctx))
	e.waitCaughtUp(t)
	got, st, _ = tailQuery(t, e, true, nil)
	if st.Live || !strings.Contains(st.Reason, string(moment.CodeShape)) || !strings.Contains(st.Reason, "app.ledger") {
		t.Fatalf("after the ALTER: %s", st)
	}
	if want, ok := w.at(st.Position.GTID); !ok || sameTables(got, want) != nil {
		t.Fatalf("after the ALTER, the snapshot's answer: %v", sameTables(got, want))
	}
	_, errText = runQuery(t, e, bin, "SELECT count(*) FROM app.ledger")
	if !strings.Contains(errText, "left out") || !strings.Contains(errText, "ALTER") {
		t.Fatalf("dbtrail query after the ALTER: stderr %q", errText)
	}
	t.Logf("after the ALTER: %s", st)
}

// runQuery runs `dbtrail query` (the binary) with the index in the
// environment and returns its standard output and error.
func runQuery(t *testing.T, e *backupEnv, bin string, args ...string) (string, string) {
	t.Helper()
	var stderr strings.Builder
	cmd := exec.CommandContext(e.ctx, bin, append([]string{"query", "--backup-dir", e.acts.BackupDir, "--format", "csv", "--memory-limit", "256MB"}, args...)...)
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dbtrail query %q: %v\n%s", args, err, stderr.String())
	}
	return string(out), stderr.String()
}

// liveCSV is a source query's rows as `dbtrail query --format csv` prints
// them, under header.
func liveCSV(t *testing.T, e *backupEnv, header, q string) string {
	t.Helper()
	return header + "\n" + strings.Join(liveLines(t, e, q), "\n") + "\n"
}
