package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// modelTables are the workload's tables (newWorkload).
var modelTables = []string{"ints", "strs", "comp", "quiet", "dups"}

// instant is a recorded moment: the live tables' rows right then, and the
// ways to name it.
type instant struct {
	note    string
	at      []string // addresses of this very state: file:pos, GTID, a time
	truth   map[string]map[string]int
	refused map[string]moment.Code // tables that must be refused, and how
}

// recorder reads the live tables after transactions.
type recorder struct {
	t    *testing.T
	e    *backupEnv
	defs map[string]*schema.Table
}

func (r *recorder) refreshDefs() {
	for _, tb := range modelTables {
		r.defs[tb] = liveDef(r.t, r.e, tb)
	}
}

// now records the state after the last transaction, named by its binlog
// position and its GTID.
func (r *recorder) now(note string) *instant {
	var file, doDB, ignoreDB string
	var pos uint64
	must(r.t, r.e.src.QueryRowContext(r.e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &doDB, &ignoreDB))
	var gtid string
	must(r.t, r.e.src.QueryRowContext(r.e.ctx, "SELECT @@gtid_binlog_pos").Scan(&gtid))
	in := &instant{note: note, at: []string{fmt.Sprintf("%s:%d", file, pos), "gtid:" + gtid}, truth: map[string]map[string]int{}}
	for _, tb := range modelTables {
		in.truth[tb] = liveCounts(r.t, r.e, r.defs[tb])
	}
	return in
}

// atTime records the state now under a time of the current second, then
// waits for the next second so that nothing else commits at or before it.
func (r *recorder) atTime(note string, rnd *rand.Rand) *instant {
	in := r.now(note)
	t := time.Now()
	var text string
	switch rnd.IntN(4) {
	case 0:
		text = t.UTC().Format("2006-01-02 15:04:05.000000")
	case 1:
		text = t.In(time.FixedZone("", -5*3600)).Format("2006-01-02T15:04:05.999-07:00")
	case 2:
		text = t.UTC().Format("2006-01-02T15:04:05.999999999Z")
	default:
		loc, err := time.LoadLocation("Asia/Kolkata")
		must(r.t, err)
		text = t.In(loc).Format("2006-01-02 15:04:05.999") + " Asia/Kolkata"
	}
	in.at = append(in.at, text)
	sleepToNextSecond()
	return in
}

// TestMomentModel: a random workload of a few hundred transactions over 50
// refreshes (pairs, links, compactions, rewrites with deltas off, keyless
// tables rewritten by counts) and a DDL (refused refresh, full backup in
// its place). The live tables are recorded after every transaction; at 24
// transactions drawn at random and at every recorded time, every table
// rebuilt at the moment (by binlog position, by GTID, by time in several
// zones) equals the recorded rows. A moment before the first snapshot is
// refused, as is the altered table between the DDL and the full backup
// that follows it. Two moments go through the Export workflow as .sql,
// load into a scratch server, and verify finds every table equal.
func TestMomentModel(t *testing.T) {
	e := newBackupEnv(t)
	eng := newEngine(t)
	rnd := rand.New(rand.NewPCG(11, 3))
	w := newWorkload(11)
	w.setup(t, e, 40)
	e.waitCaughtUp(t)
	rec := &recorder{t: t, e: e, defs: map[string]*schema.Table{}}
	rec.refreshDefs()
	before := rec.now("before the first snapshot")
	before.refused = map[string]moment.Code{}
	for _, tb := range modelTables {
		before.refused[tb] = moment.CodeBeforeSnapshots
	}
	w.change(t, e, 0) // the first snapshot is after it
	e.waitCaughtUp(t)
	e.fullBackup(t)
	var txns, times []*instant
	var ddlWindow, check0 []*instant
	ddlStep, ddlDone := 20, false
	seen := map[string]int{}
	for step := 1; step <= 50; step++ {
		for i := 0; i < 2+rnd.IntN(6); i++ {
			table := rnd.IntN(4)
			if i == 0 {
				table = 0 // ints changes at every step: its chain grows to a compaction
			}
			switch {
			case table == 3:
				w.dups(t, e)
			case step > 1 && step%13 == 0:
				// a quiet step: no change
			default:
				w.change(t, e, table)
			}
			in := rec.now(fmt.Sprintf("step %d transaction %d", step, i))
			if ddlDone {
				ddlWindow = append(ddlWindow, in)
			}
			txns = append(txns, in)
		}
		if step == ddlStep {
			w.exec(t, e, "ALTER TABLE ints ADD COLUMN extra VARCHAR(8) NULL")
			w.exec(t, e, "UPDATE ints SET extra = 'x' WHERE id = ?", w.ints[0])
			e.waitCaughtUp(t)
			rec.refreshDefs()
			ddlDone = true
			in := rec.now("right after the DDL")
			txns, ddlWindow = append(txns, in), append(ddlWindow, in)
			for i := 0; i < 3; i++ {
				w.change(t, e, rnd.IntN(3))
				in := rec.now(fmt.Sprintf("after the DDL, transaction %d", i))
				txns, ddlWindow = append(txns, in), append(ddlWindow, in)
			}
		}
		if step%4 == 0 {
			times = append(times, rec.atTime(fmt.Sprintf("time after step %d", step), rnd))
		}
		e.waitCaughtUp(t)
		res := e.refresh(t, payload.RefreshInput{TableDeltas: step != 30 && step != 45})
		switch {
		case step == ddlStep && (res.Refused || res.FullBackup != ""):
			t.Fatalf("step %d: the refresh across the DDL: %+v", step, res)
		case step != ddlStep && res.Refused:
			t.Fatalf("step %d: refused: %v", step, res.Reasons)
		}
		if step == ddlStep {
			// Between the DDL and the refresh that folded it, the newest
			// snapshot has ints' old shape: moments there are rebuilt across
			// the ADD COLUMN (the old rows with the column NULL).
			check0 = append(check0, ddlWindow...)
			ddlDone = false
		}
		snap := e.current(t)
		for _, mt := range snap.Manifest.Tables {
			seen[mt.Origin]++
		}
		if len(res.Compact) > 0 {
			if err := e.waitClosed(t, payload.CompactWorkflowID("main")); err != nil {
				t.Fatalf("step %d: Compact: %v", step, err)
			}
		}
	}
	t.Logf("%d transactions recorded, %d times; table origins over the run: %v", len(txns), len(times), seen)
	if seen[snapshot.OriginCompacted]+seen[snapshot.OriginCompactedPair] == 0 || seen[snapshot.OriginRewritten] == 0 || seen[snapshot.OriginPair] == 0 {
		t.Fatalf("the run did not compact, rewrite and pair: %v", seen)
	}

	// 24 transactions at random, the DDL window's, every time, and the
	// moment before the first snapshot.
	rnd.Shuffle(len(txns), func(i, j int) { txns[i], txns[j] = txns[j], txns[i] })
	check := append([]*instant{before}, txns[:24]...)
	check = append(check, times...)
	for _, in := range check0 {
		if !containsInstant(check, in) {
			check = append(check, in)
		}
	}
	checked := 0
	for _, in := range check {
		for _, at := range in.at {
			for _, tb := range modelTables {
				got, plan, err := rebuild(t, e, eng, at, tb)
				if code, ok := in.refused[tb]; ok {
					refusedAs(t, err, code, fmt.Sprintf("%s (%s) table %s", at, in.note, tb))
					continue
				}
				if err != nil {
					t.Fatalf("%s (%s) table %s: %v", at, in.note, tb, err)
				}
				if err := sameRows(got, in.truth[tb]); err != nil {
					t.Fatalf("%s (%s) table %s, cut %s, from snapshot %s: %v", at, in.note, tb, plan.Cut, plan.Base, err)
				}
				checked++
			}
		}
	}
	t.Logf("%d instants, %d tables rebuilt equal to the recorded truth", len(check), checked)

	// Two moments through the Export workflow as .sql into a scratch
	// server: verify finds each table equal to the moment, and the copy
	// equals the recorded rows.
	scratch := testsuite.StartIndex(t)
	sdb, err := scratch.DB(e.ctx, "")
	must(t, err)
	defer sdb.Close()
	exported := 0
	for _, in := range append(txns[24:], times...) {
		if exported == 2 || len(in.refused) > 0 {
			continue
		}
		exported++
		at := in.at[len(in.at)-1]
		file := filepath.Join(t.TempDir(), "moment.sql")
		res, err := e.export(t, payload.ExportSpec{Format: payload.ExportSQL, At: at, Out: file})
		must(t, err)
		if len(res.Tables) != len(modelTables) {
			t.Fatalf("export at %s: %d tables", at, len(res.Tables))
		}
		must(t, scratch.Exec(e.ctx, "DROP DATABASE IF EXISTS app"))
		exporttest.LoadSQL(t, scratch, "", file)
		a, _ := when.Parse(at)
		cat := moment.LocalCatalog{SourceDir: filepath.Join(e.acts.BackupDir, "main")}
		plan, err := moment.PlanAt(e.ctx, e.store, e.store, cat, "main", a, moment.Selection{})
		must(t, err)
		rb := moment.Rebuilder{Source: "main", Engine: eng, Events: moment.IndexEvents{Store: e.store}, Catalog: cat}
		for _, tp := range plan.Tables {
			mt, err := rb.Open(e.ctx, tp, nil)
			must(t, err)
			v, err := verify.Moment(e.ctx, sdb, mt, plan.Cut.Position(), verify.Options{Explain: true})
			mt.Close()
			must(t, err)
			if v.Verdict != verify.Match {
				t.Fatalf("verify %s of the .sql export at %s: %s (%s) %v", tp.Key(), at, v.Verdict, v.Reason, v.Diff)
			}
			if err := sameRows(liveCountsDB(t, e, sdb, rec.defsAt(in, tp.Table)), in.truth[tp.Table]); err != nil {
				t.Fatalf("the scratch copy of %s at %s: %v", tp.Table, at, err)
			}
		}
		t.Logf(".sql export at %s (%s): loaded and verified, cut %s", at, in.note, res.Plan.Plan.Cut)
	}
	if exported != 2 {
		t.Fatalf("%d moments exported", exported)
	}
	if ents, _ := os.ReadDir(filepath.Dir(e.acts.BackupDir)); len(ents) == 0 {
		t.Fatal("no backup folder")
	}
}

// defsAt is the definition an instant's rows follow (its truth's shape).
func (r *recorder) defsAt(in *instant, table string) *schema.Table {
	d := r.defs[table]
	// The current definition holds for instants after the DDL; earlier
	// ones of the altered table lack its new column.
	for img := range in.truth[table] {
		if table == "ints" && !strings.Contains(img, `"extra"`) {
			old := d.Clone()
			old.Columns = old.Columns[:len(old.Columns)-1]
			return old
		}
		break
	}
	return d
}

func containsInstant(list []*instant, in *instant) bool {
	for _, x := range list {
		if x == in {
			return true
		}
	}
	return false
}
