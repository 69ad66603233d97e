package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// sleepToNextSecond waits until 50 ms into the next wall-clock second, so
// that what follows commits in a second of its own (the source's commit
// times are whole seconds).
func sleepToNextSecond() time.Time {
	next := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(next) + 50*time.Millisecond)
	return next
}

// TestMomentTransactionBoundary: one transaction committed at second S
// changes two tables (6,001 rows into one, streamed in batches, and every
// row of the other). At S, anywhere in S, at its GTID and at the seq of its
// first event it is wholly in both tables; at S−1 and a microsecond before
// S it is wholly out of both. Every cut names the transaction. The Export
// workflow writes the moment as Parquet (footers naming it) and as .sql,
// which loads into a scratch server that verify finds equal to the moment.
func TestMomentTransactionBoundary(t *testing.T) {
	e := newBackupEnv(t)
	eng := newEngine(t)
	w := newWorkload(5)
	for _, q := range []string{
		`CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))`,
		`CREATE TABLE b (id INT PRIMARY KEY, n INT)`,
		`INSERT INTO a VALUES (1, 'x'), (2, 'y'), (3, NULL)`,
		`INSERT INTO b VALUES (1, 1), (2, 2), (3, 3)`,
	} {
		w.exec(t, e, q)
	}
	e.waitCaughtUp(t)
	e.fullBackup(t)
	w.exec(t, e, "INSERT INTO a VALUES (10, 'before')")
	defA, defB := liveDef(t, e, "a"), liveDef(t, e, "b")
	beforeA, beforeB := liveCounts(t, e, defA), liveCounts(t, e, defB)
	sleepToNextSecond()
	tx, err := e.src.BeginTx(e.ctx, nil)
	must(t, err)
	for _, q := range []string{
		"INSERT INTO a SELECT seq + 1000, 'big' FROM seq_1_to_6000",
		"UPDATE b SET n = n + 100",
		"INSERT INTO a VALUES (20, 'in')",
	} {
		if _, err := tx.ExecContext(e.ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	must(t, tx.Commit())
	afterA, afterB := liveCounts(t, e, defA), liveCounts(t, e, defB)
	sleepToNextSecond()
	w.exec(t, e, "INSERT INTO b VALUES (30, 0)")
	e.waitCaughtUp(t)

	evs, err := e.store.KeyChanges(e.ctx, "main", "app", "a", "[20]")
	must(t, err)
	if len(evs) != 1 {
		t.Fatalf("%d events of a [20]", len(evs))
	}
	txn := evs[0]
	s := txn.CommitTime
	first, err := e.store.KeyChanges(e.ctx, "main", "app", "a", "[1001]")
	must(t, err)
	t.Logf("the transaction: GTID %s, commit %s, seqs %d..%d, ends at %s:%d", txn.GTID, s, first[0].Seq, txn.Seq, txn.BinlogFile, txn.EndPos)
	lastB, err := e.store.KeyChanges(e.ctx, "main", "app", "b", "[3]")
	must(t, err)
	lastSeq := max(txn.Seq, lastB[len(lastB)-1].Seq) // the transaction's last event
	in := []string{
		s.Format("2006-01-02 15:04:05"),
		s.Add(999 * time.Millisecond).Format("2006-01-02 15:04:05.999999"),
		s.In(time.FixedZone("", 2*3600)).Format("2006-01-02T15:04:05-07:00"),
		s.Format("2006-01-02 15:04:05") + " UTC",
		txn.GTID,
		"seq:" + strconv.FormatUint(first[0].Seq, 10),
		"seq:" + strconv.FormatUint(lastSeq, 10),
		txn.BinlogFile + ":" + strconv.FormatUint(txn.EndPos, 10),
	}
	out := []string{
		s.Add(-time.Second).Format("2006-01-02 15:04:05"),
		s.Add(-time.Microsecond).Format("2006-01-02 15:04:05.999999"),
		txn.BinlogFile + ":" + strconv.FormatUint(txn.EndPos-1, 10),
	}
	for _, at := range append(in, out...) {
		wantA, wantB := afterA, afterB
		inside := !strings.Contains(strings.Join(out, "|"), at)
		if !inside {
			wantA, wantB = beforeA, beforeB
		}
		gotA, plan, err := rebuild(t, e, eng, at, "a")
		must(t, err)
		gotB, _, err := rebuild(t, e, eng, at, "b")
		must(t, err)
		if err := sameRows(gotA, wantA); err != nil {
			t.Fatalf("a at %s (in %v): %v", at, inside, err)
		}
		if err := sameRows(gotB, wantB); err != nil {
			t.Fatalf("b at %s (in %v): %v", at, inside, err)
		}
		if inside && (plan.Cut.Txn.Position.GTID != txn.GTID || plan.Cut.Seq != lastSeq || !strings.Contains(plan.Cut.String(), txn.GTID)) {
			t.Fatalf("at %s the cut is %s, want the transaction %s ending at seq %d", at, plan.Cut, txn.GTID, lastSeq)
		}
		t.Logf("at %-35s cut: %s", at, plan.Cut)
	}

	// The Export workflow: Parquet at S, .sql a second before.
	dir := t.TempDir()
	res, err := e.export(t, payload.ExportSpec{Format: payload.ExportParquet, At: in[0], Out: filepath.Join(dir, "at-s")})
	must(t, err)
	if res.Plan.Plan == nil || res.Plan.Plan.Cut.Txn.Position.GTID != txn.GTID || len(res.Tables) != 2 || res.Rows != int64(countRows(afterA)+countRows(afterB)) {
		t.Fatalf("parquet export: %+v", res)
	}
	for _, tb := range []string{"a", "b"} {
		r, err := snapshot.OpenTableFile(filepath.Join(dir, "at-s", "app", tb+".parquet"))
		must(t, err)
		f := r.Footer()
		r.Close()
		at, _ := f.ExtraValue(snapshot.KeyAt)
		var cut moment.Cut
		cutText, _ := f.ExtraValue(snapshot.KeyCut)
		must(t, json.Unmarshal([]byte(cutText), &cut))
		if at != in[0] || f.Position.Seq != lastSeq || f.Position.GTID != txn.GTID || cut.Txn.Position.GTID != txn.GTID {
			t.Fatalf("footer of %s: at %q position %+v cut %+v", tb, at, f.Position, cut)
		}
	}
	var man calls.ExportManifest
	b, err := os.ReadFile(filepath.Join(dir, "at-s", activities.ExportManifestName))
	must(t, err)
	must(t, json.Unmarshal(b, &man))
	if man.Cut == nil || man.Cut.Seq != lastSeq || len(man.Tables) != 2 {
		t.Fatalf("export.json: %s", b)
	}
	sqlAt := out[0]
	file := filepath.Join(dir, "before.sql")
	res, err = e.export(t, payload.ExportSpec{Format: payload.ExportSQL, At: sqlAt, Out: file})
	must(t, err)
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("the export folder holds %d entries (a staging folder left?)", len(ents))
	}
	scratch := testsuite.StartIndex(t)
	exporttest.LoadSQL(t, scratch, "", file)
	sdb, err := scratch.DB(e.ctx, "")
	must(t, err)
	defer sdb.Close()
	for _, tb := range []string{"a", "b"} {
		a, _ := when.Parse(sqlAt)
		cat := moment.LocalCatalog{SourceDir: filepath.Join(e.acts.BackupDir, "main")}
		plan, err := moment.PlanAt(e.ctx, e.store, e.store, cat, "main", a, moment.Selection{Tables: []string{"app." + tb}})
		must(t, err)
		rb := moment.Rebuilder{Source: "main", Engine: eng, Events: moment.IndexEvents{Store: e.store}, Catalog: cat}
		mt, err := rb.Open(e.ctx, plan.Tables[0], nil)
		must(t, err)
		v, err := verify.Moment(e.ctx, sdb, mt, plan.Cut.Position(), verify.Options{Explain: true})
		mt.Close()
		must(t, err)
		if v.Verdict != verify.Match {
			t.Fatalf("verify %s of the .sql export at %s: %s (%s) %v", tb, sqlAt, v.Verdict, v.Reason, v.Diff)
		}
	}
	if got := liveCountsDB(t, e, sdb, defA); sameRows(got, beforeA) != nil {
		t.Fatalf("the scratch copy of a is not the table before the transaction: %v", sameRows(got, beforeA))
	}
}
