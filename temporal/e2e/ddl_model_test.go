package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
)

// ddlModelSeedEnv makes TestSchemaChangeModel's schema changes
// reproducible: the seed it logs (the row traffic of its three connections
// interleaves as the scheduler runs them, so only the statements repeat).
const ddlModelSeedEnv = "DBTRAIL_DDL_MODEL_SEED"

// TestSchemaChangeModel (issue 32's model test): a seeded random sequence
// of every kind of schema change — metadata only, added columns (NULL and
// constant defaults of several types, FIRST/AFTER), dropped and renamed
// columns, widenings, CREATE TABLE (plain, LIKE, SELECT), DROP, RENAME
// (and a swap), TRUNCATE, and two kinds only the source knows (a VARCHAR
// column made INT, a column added with DEFAULT CURRENT_TIMESTAMP) —
// interleaved with row changes from three connections over six to nine
// tables, a refresh after every window of a few statements. After each
// refresh (traffic paused, capture caught up) the snapshot lists exactly
// the live tables, each with the live columns and rows, and the refresh
// re-dumped exactly the tables the model marked. Moments recorded inside
// windows (the binlog position and a table's live rows, traffic paused)
// rebuild to the recorded rows at the end. The source was read by one
// FullBackup (the first) and by the re-dumps, each of which dumped exactly
// the tables its refresh's plan named.
func TestSchemaChangeModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(ddlModelSeedEnv); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		must(t, err)
	}
	t.Logf("seed %d (%s=%d repeats the schema changes)", seed, ddlModelSeedEnv, seed)
	r := rand.New(rand.NewPCG(seed, 32))
	began := time.Now() // for the log only
	e := newBackupEnv(t)
	eng := newEngine(t)
	exec := func(q string) {
		t.Helper()
		if _, err := e.src.ExecContext(e.ctx, q); err != nil {
			t.Fatalf("seed %d: %s: %v", seed, q, err)
		}
	}
	m := &ddlModel{redump: map[string]bool{}}
	for range 6 {
		tb := baseTable(m.fresh("t"))
		m.tables = append(m.tables, tb)
		exec(fmt.Sprintf(baseTableDDL, tb.name))
		exec(fmt.Sprintf("INSERT INTO `%s` SELECT seq, CONCAT('v', seq), seq, seq FROM seq_1_to_200", tb.name))
		tb.next.Store(200)
	}
	e.fullBackup(t)

	var mu sync.RWMutex
	dml := startModelDML(e.ctx, e.src, m, &mu, seed, 3)
	defer dml.close(t)
	// locked runs fn holding the write lock, released even when fn fails
	// the test (else the deferred close waits for connections that wait
	// for the lock).
	locked := func(fn func()) {
		mu.Lock()
		defer mu.Unlock()
		fn()
	}
	plan := kindPlan(r, 8, 4)
	var moments []ddlMoment
	var redumps [][]string // per refresh that re-dumped: the tables its plan named
	statements := 0
	for w, kinds := range plan {
		markAt := r.IntN(len(kinds)) // one moment per window, after this statement
		for i, kind := range kinds {
			time.Sleep(time.Duration(20+r.IntN(60)) * time.Millisecond) // row traffic between the statements
			dml.check(t)
			locked(func() {
				for _, q := range m.ddl(r, kind) {
					t.Logf("window %d: %s", w+1, q)
					exec(q)
					statements++
				}
				if i == markAt {
					moments = append(moments, recordMoment(t, e, m, r))
				}
			})
		}
		locked(func() {
			if rd := modelRefresh(t, e, eng, m, w+1); rd != nil {
				redumps = append(redumps, rd)
			}
		})
	}
	dml.close(t)
	t.Logf("%d schema changes in %d windows, %d row changes, %d re-dumps, %s",
		statements, len(plan), dml.changes.Load(), len(redumps), time.Since(began).Round(time.Second))
	for _, mo := range moments {
		got, lplan, err := rebuild(t, e, eng, mo.at, mo.table)
		if err != nil {
			t.Fatalf("seed %d: moment %s of %s: %v", seed, mo.at, mo.table, err)
		}
		if err := sameRows(got, mo.truth); err != nil {
			t.Fatalf("seed %d: moment %s of %s (lineage %+v): %v", seed, mo.at, mo.table, lplan.Tables[0].Lineage, err)
		}
	}
	t.Logf("%d moments rebuilt", len(moments))
	if n := len(workflowRuns(t, e, payload.FullBackupWorkflowID("main"))); n != 1 {
		t.Fatalf("seed %d: %d FullBackup runs, want 1 (the first)", seed, n)
	}
	checkRedumpRuns(t, e, redumps)
	t.Logf("wall time %s", time.Since(began).Round(time.Second))
}

// ddlMoment is a recorded position and the live rows of one table then.
type ddlMoment struct {
	at, table string
	truth     map[string]int
}

// recordMoment records the binlog position (traffic paused: the caller
// holds the model's write lock) and the live rows of a table whose
// lineage since the last refresh needs no re-dump (a moment of a table
// the fold cannot prove is refused, as the moment planner documents).
func recordMoment(t *testing.T, e *backupEnv, m *ddlModel, r *rand.Rand) ddlMoment {
	t.Helper()
	var cands []string
	for _, tb := range m.tables {
		if !m.redump[tb.name] {
			cands = append(cands, tb.name)
		}
	}
	var file string
	var pos uint64
	var a, b any
	must(t, e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &a, &b))
	e.waitCaughtUp(t)
	name := cands[r.IntN(len(cands))]
	mo := ddlMoment{at: fmt.Sprintf("%s:%d", file, pos), table: name, truth: liveCounts(t, e, liveDef(t, e, name))}
	t.Logf("moment %s: %s, %d rows", mo.at, name, countRows(mo.truth))
	return mo
}

// modelRefresh refreshes with traffic paused and checks the result against
// the model: no refusal and no full backup, the re-dump of exactly the
// marked tables, the snapshot's tables the live ones, each with the live
// columns and rows. It returns the tables re-dumped (nil for none) and
// clears the marks.
func modelRefresh(t *testing.T, e *backupEnv, eng *fold.Engine, m *ddlModel, w int) []string {
	t.Helper()
	e.waitCaughtUp(t)
	began := time.Now() // for the log only
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused || res.FullBackup != "" || res.SnapshotID == "" {
		t.Fatalf("window %d: refresh refused %v, full backup %q, snapshot %q: %q\ndecisions:\n%s",
			w, res.Refused, res.FullBackup, res.SnapshotID, res.Reasons, strings.Join(res.Tables, "\n"))
	}
	var want []string
	for name := range m.redump {
		want = append(want, "app."+name)
	}
	slices.Sort(want)
	var got []string
	if res.Redump != nil {
		got = slices.Sorted(slices.Values(res.Redump.Tables))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("window %d: re-dumped %v, the model marked %v\ndecisions:\n%s", w, got, want, strings.Join(res.Tables, "\n"))
	}
	t.Logf("window %d: refresh %s in %s, re-dumped %v\n%s", w, res.SnapshotID, time.Since(began).Round(time.Millisecond), got, strings.Join(res.Tables, "\n"))
	snap := e.current(t)
	if snap.Manifest.SnapshotID != res.SnapshotID {
		t.Fatalf("window %d: current %s, the refresh published %s", w, snap.Manifest.SnapshotID, res.SnapshotID)
	}
	live := liveTables(t, e)
	var listed []string
	for _, mt := range snap.Manifest.Tables {
		listed = append(listed, mt.Table)
	}
	if slices.Sort(listed); !slices.Equal(listed, live) {
		t.Fatalf("window %d: snapshot lists %v, the source has %v", w, listed, live)
	}
	var names []string
	for _, tb := range m.tables {
		names = append(names, tb.name)
	}
	if slices.Sort(names); !slices.Equal(names, live) {
		t.Fatalf("window %d: the model has %v, the source %v (the test's model is wrong)", w, names, live)
	}
	checkLive(t, e, eng, snap, fmt.Sprintf("window %d", w))
	sameColumns(t, e, snap, w)
	clear(m.redump)
	return got
}

// liveTables are the base tables of the source's app schema, sorted.
func liveTables(t *testing.T, e *backupEnv) []string {
	t.Helper()
	rows, err := e.src.QueryContext(e.ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'app' AND table_type = 'BASE TABLE' ORDER BY table_name")
	must(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		must(t, rows.Scan(&n))
		out = append(out, n)
	}
	must(t, rows.Err())
	return out
}

// sameColumns requires every table of snap to have the live table's
// columns in order, with their types (and VARCHAR lengths).
func sameColumns(t *testing.T, e *backupEnv, snap *snapshot.Snapshot, w int) {
	t.Helper()
	for _, mt := range snap.Manifest.Tables {
		at, err := fold.SnapshotTable(snap, mt.Schema, mt.Table)
		must(t, err)
		var got []string
		for _, c := range at.Table.Columns {
			got = append(got, columnSpelling(c.Name, c.Type, c.Length))
		}
		rows, err := e.src.QueryContext(e.ctx, `SELECT column_name, data_type, COALESCE(character_maximum_length, 0) FROM information_schema.columns
			WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position`, mt.Schema, mt.Table)
		must(t, err)
		var want []string
		for rows.Next() {
			var name, typ string
			var n int
			must(t, rows.Scan(&name, &typ, &n))
			want = append(want, columnSpelling(name, typ, n))
		}
		must(t, rows.Err())
		rows.Close()
		if !slices.Equal(got, want) {
			t.Fatalf("window %d: %s.%s: snapshot columns %v, live %v", w, mt.Schema, mt.Table, got, want)
		}
	}
}

func columnSpelling(name, typ string, length int) string {
	if typ == "varchar" {
		return fmt.Sprintf("%s %s(%d)", name, typ, length)
	}
	return name + " " + typ
}

// workflowRuns lists the runs (open and closed) of workflow id.
func workflowRuns(t *testing.T, e *backupEnv, id string) []string {
	t.Helper()
	var runs []string
	var token []byte
	for {
		resp, err := e.c.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: temporalclient.DefaultNamespace,
			PageSize: 100, NextPageToken: token, Query: fmt.Sprintf("WorkflowId = '%s'", id)})
		must(t, err)
		for _, ex := range resp.GetExecutions() {
			runs = append(runs, ex.GetExecution().GetRunId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return runs
		}
	}
}

// checkRedumpRuns requires the partial full backups (runs of
// redump-main) to be one per re-dumping refresh, and what each run's Dump
// step asked mydumper for and got back to be exactly the tables that
// refresh's plan named, read from the runs' histories.
func checkRedumpRuns(t *testing.T, e *backupEnv, want [][]string) {
	t.Helper()
	id := payload.RedumpWorkflowID("main")
	runs := workflowRuns(t, e, id)
	var got [][]string
	for _, run := range runs {
		asked, dumped := dumpedTables(t, e, id, run)
		if !slices.Equal(asked, dumped) {
			t.Fatalf("re-dump run %s: mydumper asked for %v, dumped %v", run, asked, dumped)
		}
		got = append(got, dumped)
	}
	key := func(l [][]string) []string {
		var out []string
		for _, ts := range l {
			out = append(out, strings.Join(ts, ","))
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(key(got), key(want)) {
		t.Fatalf("re-dump runs dumped %v, the refreshes' plans named %v", key(got), key(want))
	}
	t.Logf("%d re-dump runs, each dumped what its plan named: %v", len(runs), key(got))
}

// dumpedTables reads a partial full backup's history: the tables its Dump
// step was asked for and the tables it returned, sorted.
func dumpedTables(t *testing.T, e *backupEnv, id, run string) (asked, dumped []string) {
	t.Helper()
	dc := converter.GetDefaultDataConverter()
	dumpEvent := int64(0)
	iter := e.c.GetWorkflowHistory(e.ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		must(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Dump" {
			var in struct{ Tables []string }
			must(t, dc.FromPayloads(a.GetInput(), &in))
			asked, dumpEvent = slices.Sorted(slices.Values(in.Tables)), ev.GetEventId()
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && a.GetScheduledEventId() == dumpEvent {
			var res struct {
				Tables []struct{ Schema, Table string }
			}
			must(t, dc.FromPayloads(a.GetResult(), &res))
			for _, tb := range res.Tables {
				dumped = append(dumped, tb.Schema+"."+tb.Table)
			}
			slices.Sort(dumped)
		}
	}
	if dumpEvent == 0 || len(asked) == 0 {
		t.Fatalf("re-dump run %s: no Dump of named tables in its history", run)
	}
	return asked, dumped
}
