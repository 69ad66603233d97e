package e2e

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// waitCaughtUp waits until capture's checkpoint is at the source's binlog
// end (traffic paused).
func (e *backupEnv) waitCaughtUp(t *testing.T) {
	t.Helper()
	var file string
	var pos uint64
	var a, b any
	must(t, e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &a, &b))
	want := binlogpos.Position{File: file, Pos: pos}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		cp, ok, err := e.store.LoadCheckpoint(e.ctx, "main")
		must(t, err)
		if ok {
			if c, err := binlogpos.Compare(cp.Pos().Coords(), want); err == nil && c >= 0 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("capture did not reach %s", want)
}

// refresh runs a Refresh to its end.
func (e *backupEnv) refresh(t *testing.T, in payload.RefreshInput) workflows.RefreshResult {
	t.Helper()
	in.Source = "main"
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RefreshWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.Refresh, in)
	must(t, err)
	var res workflows.RefreshResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	return res
}

// waitClosed waits for the latest run of workflowID to close and returns
// its error.
func (e *backupEnv) waitClosed(t *testing.T, workflowID string) error {
	t.Helper()
	return e.c.GetWorkflow(e.ctx, workflowID, "").Get(e.ctx, nil)
}

// current opens the current snapshot and checks every digest.
func (e *backupEnv) current(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	snap, err := snapshot.OpenCurrent(filepath.Join(e.acts.BackupDir, "main"))
	must(t, err)
	must(t, snap.VerifyAll())
	return snap
}

// snapshotRows reads schema.table at snap (table file and chain) as
// canonical images.
func snapshotRows(t *testing.T, e *backupEnv, eng *fold.Engine, snap *snapshot.Snapshot, schemaName, table string) (map[string]int, *fold.TableAt) {
	t.Helper()
	at, err := fold.SnapshotTable(snap, schemaName, table)
	must(t, err)
	got := map[string]int{}
	must(t, eng.Rows(e.ctx, at, func(row []rowimage.Cell) error {
		img, err := rowimage.SQLImage(at.Table, row)
		if err != nil {
			return err
		}
		got[string(img)]++
		return nil
	}))
	return got, &at
}

// liveCounts reads the live table as canonical images, with their copies.
func liveCounts(t *testing.T, e *backupEnv, def *schema.Table) map[string]int {
	t.Helper()
	return liveCountsDB(t, e, e.src, def)
}

// checkLive requires every table of snap, read through its chain, to equal
// the live table.
func checkLive(t *testing.T, e *backupEnv, eng *fold.Engine, snap *snapshot.Snapshot, step string) {
	t.Helper()
	for _, mt := range snap.Manifest.Tables {
		got, at := snapshotRows(t, e, eng, snap, mt.Schema, mt.Table)
		want := liveCounts(t, e, at.Table)
		if err := sameRows(got, want); err != nil {
			t.Fatalf("%s: snapshot %s table %s.%s (%s, chain %d files): %v", step, snap.Manifest.SnapshotID, mt.Schema, mt.Table, mt.Origin, len(mt.Chain), err)
		}
	}
}

func sameRows(got, want map[string]int) error {
	var extra, missing []string
	for r, n := range got {
		if n > want[r] {
			extra = append(extra, fmt.Sprintf("%d× %s", n-want[r], r))
		}
	}
	for r, n := range want {
		if n > got[r] {
			missing = append(missing, fmt.Sprintf("%d× %s", n-got[r], r))
		}
	}
	if len(extra)+len(missing) == 0 {
		return nil
	}
	slices.Sort(extra)
	slices.Sort(missing)
	return fmt.Errorf("%d distinct rows, want %d; extra %v; missing %v", len(got), len(want), head(extra), head(missing))
}

func head(s []string) []string {
	if len(s) > 3 {
		return append(s[:3:3], fmt.Sprintf("… %d more", len(s)-3))
	}
	return s
}

// workload changes the test tables at random: inserts, updates, key
// changes, deletes and re-inserts of deleted keys, on integer, string and
// composite keys. Keys are tracked in Go.
type workload struct {
	r       *rand.Rand
	ints    []int
	strs    []string
	comps   [][2]any
	deleted []int
	next    int
}

func newWorkload(seed uint64) *workload {
	return &workload{r: rand.New(rand.NewPCG(seed, 99)), next: 1}
}

// setup creates the tables and their first rows.
func (w *workload) setup(t *testing.T, e *backupEnv, rows int) {
	t.Helper()
	w.createTables(t, e)
	w.firstRows(t, e, rows)
}

// createTables creates the tables, empty.
func (w *workload) createTables(t *testing.T, e *backupEnv) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE ints (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT NULL)`,
		`CREATE TABLE strs (k VARCHAR(32) PRIMARY KEY, body TEXT)`,
		`CREATE TABLE comp (a INT, b VARCHAR(10), c DOUBLE NULL, PRIMARY KEY (a, b))`,
		`CREATE TABLE quiet (id INT PRIMARY KEY, note VARCHAR(10))`,
		`CREATE TABLE dups (a INT, b VARCHAR(5))`,
	} {
		w.exec(t, e, q)
	}
}

// firstRows inserts the first rows: fixed ones into the keyless and the
// quiet table, rows into each of the others.
func (w *workload) firstRows(t *testing.T, e *backupEnv, rows int) {
	t.Helper()
	w.exec(t, e, `INSERT INTO dups VALUES (1, 'x'), (1, 'x'), (1, 'x'), (2, NULL), (2, NULL), (3, 'y')`)
	w.exec(t, e, `INSERT INTO quiet VALUES (1, 'never'), (2, 'changes')`)
	for range rows {
		w.insert(t, e, 0)
		w.insert(t, e, 1)
		w.insert(t, e, 2)
	}
}

func (w *workload) exec(t *testing.T, e *backupEnv, q string, args ...any) {
	t.Helper()
	if _, err := e.src.ExecContext(e.ctx, q, args...); err != nil {
		t.Fatalf("%s %v: %v", q, args, err)
	}
}

func (w *workload) insert(t *testing.T, e *backupEnv, table int) {
	w.next++
	switch table {
	case 0:
		id := w.next
		if len(w.deleted) > 0 && w.r.IntN(3) == 0 { // re-insert a deleted key
			id, w.deleted = w.deleted[0], w.deleted[1:]
		}
		w.exec(t, e, "INSERT INTO ints (id, v, n) VALUES (?, ?, ?)", id, fmt.Sprintf("v%d", w.r.IntN(1000)), w.maybe(w.r.Int64()))
		w.ints = append(w.ints, id)
	case 1:
		k := fmt.Sprintf("key-%d-é", w.next)
		w.exec(t, e, "INSERT INTO strs VALUES (?, ?)", k, w.maybe(fmt.Sprintf("body %d", w.r.IntN(1e6))))
		w.strs = append(w.strs, k)
	default:
		c := [2]any{w.next % 13, fmt.Sprintf("b%d", w.next)}
		w.exec(t, e, "INSERT INTO comp VALUES (?, ?, ?)", c[0], c[1], w.maybe(w.r.Float64()))
		w.comps = append(w.comps, c)
	}
}

func (w *workload) maybe(v any) any {
	if w.r.IntN(6) == 0 {
		return nil
	}
	return v
}

// step runs n random changes, at least one on ints, and now and then one on
// the keyless table with duplicate rows.
func (w *workload) step(t *testing.T, e *backupEnv, n int) {
	t.Helper()
	w.change(t, e, 0)
	for range n - 1 {
		w.change(t, e, w.r.IntN(3))
	}
	if w.r.IntN(3) == 0 {
		w.dups(t, e)
	}
}

// dups changes one copy of a duplicated row of the keyless table, or adds
// a copy.
func (w *workload) dups(t *testing.T, e *backupEnv) {
	t.Helper()
	a := w.r.IntN(3) + 1
	switch w.r.IntN(3) {
	case 0:
		w.exec(t, e, "INSERT INTO dups SELECT a, b FROM dups WHERE a = ? LIMIT 1", a)
		w.exec(t, e, "INSERT INTO dups VALUES (?, 'x')", a)
	case 1:
		w.exec(t, e, "DELETE FROM dups WHERE a = ? LIMIT 1", a)
	default:
		w.exec(t, e, "UPDATE dups SET b = 'z' WHERE a = ? LIMIT 1", a)
	}
}

func (w *workload) change(t *testing.T, e *backupEnv, table int) {
	t.Helper()
	op := w.r.IntN(10)
	switch table {
	case 0:
		if len(w.ints) < 5 || op < 3 {
			w.insert(t, e, 0)
			return
		}
		i := w.r.IntN(len(w.ints))
		id := w.ints[i]
		switch {
		case op < 6:
			w.exec(t, e, "UPDATE ints SET v = ?, n = ? WHERE id = ?", fmt.Sprintf("u%d", w.r.IntN(1e6)), w.maybe(w.r.Int64()), id)
		case op < 8: // the key changes
			w.next++
			w.exec(t, e, "UPDATE ints SET id = ? WHERE id = ?", w.next, id)
			w.ints[i] = w.next
		default:
			w.exec(t, e, "DELETE FROM ints WHERE id = ?", id)
			w.ints = slices.Delete(w.ints, i, i+1)
			w.deleted = append(w.deleted, id)
		}
	case 1:
		if len(w.strs) < 5 || op < 3 {
			w.insert(t, e, 1)
			return
		}
		i := w.r.IntN(len(w.strs))
		k := w.strs[i]
		switch {
		case op < 6:
			w.exec(t, e, "UPDATE strs SET body = ? WHERE k = ?", w.maybe(fmt.Sprintf("new %d", w.r.IntN(1e6))), k)
		case op < 8:
			w.next++
			nk := fmt.Sprintf("moved-%d", w.next)
			w.exec(t, e, "UPDATE strs SET k = ? WHERE k = ?", nk, k)
			w.strs[i] = nk
		default:
			w.exec(t, e, "DELETE FROM strs WHERE k = ?", k)
			w.strs = slices.Delete(w.strs, i, i+1)
		}
	default:
		if len(w.comps) < 5 || op < 3 {
			w.insert(t, e, 2)
			return
		}
		i := w.r.IntN(len(w.comps))
		c := w.comps[i]
		switch {
		case op < 6:
			w.exec(t, e, "UPDATE comp SET c = ? WHERE a = ? AND b = ?", w.maybe(w.r.Float64()), c[0], c[1])
		case op < 8:
			w.next++
			nb := fmt.Sprintf("m%d", w.next)
			w.exec(t, e, "UPDATE comp SET b = ? WHERE a = ? AND b = ?", nb, c[0], c[1])
			w.comps[i] = [2]any{c[0], nb}
		default:
			w.exec(t, e, "DELETE FROM comp WHERE a = ? AND b = ?", c[0], c[1])
			w.comps = slices.Delete(w.comps, i, i+1)
		}
	}
}
