package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// pastHours is how many past hours pastEnv fills, archives and drops.
const pastHours = 6

// pastEnv is the shared setting of TestArchivedMoments: a source whose
// first six hours of traffic (stamped 40 hours ago with SET TIMESTAMP) were
// archived to an Object Lock bucket on versitygw and dropped from the
// index, and whose current hour is still in the index.
//
// By seq: the tables are created empty and a full backup is taken (S0, at
// the capture start: its seq is the floor); hour H0 inserts the first rows;
// every hour runs workload steps; a refresh publishes S1 at the end of H1
// and S2 at the end of H3; H4, H5 and the current hour are after the
// current snapshot. The every-type table changes in H2, H3, H5 and the
// current hour; app.acct's row moves from key 1 to 2 in H2 and from 2 to 3
// in the current hour. Then an Archive run moves H0..H5 to the store and
// drops them, and S0 and S1 are pruned locally: they are only on the
// store.
type pastEnv struct {
	*archiveEnv
	eng  *fold.Engine
	rec  *recorder
	bin  string
	base time.Time // H0
	// snaps are S0, S1 and S2, snapSeqs their seqs; pruned are the ids
	// only on the store.
	snaps    []string
	snapSeqs []uint64
	pruned   map[string]bool
	// past are the instants recorded inside H0..H5, now holds those of the
	// current hour.
	past, now []*pastInstant
	// orig is every event the index held before the archive run.
	orig map[uint64]change.Event
	// from is the start of the changes range (inside H3).
	from time.Time
}

// pastInstant is a recorded state of the model tables with where it is in
// the stream.
type pastInstant struct {
	*instant
	hour  int       // k of H_k; -1 for the current hour
	stamp time.Time // the commit time of its last transaction (archived hours)
	pos   binlogpos.Position
	// seq and gtid are those of the last event at or before pos.
	seq  uint64
	gtid string
}

// newPastEnv builds the pastEnv (see its doc).
func newPastEnv(t *testing.T) *pastEnv {
	t.Helper()
	// Object Lock with a default retention: every object version the worker
	// writes is retained.
	return newPastEnvOn(t, testsuite.S3Options{ObjectLock: true, RetentionDays: 1})
}

// newPastEnvOn is newPastEnv on a bucket made with s3opts.
func newPastEnvOn(t *testing.T, s3opts testsuite.S3Options) *pastEnv {
	t.Helper()
	bin := buildDbtrailAsync(t)
	p := &pastEnv{archiveEnv: newArchiveEnvOn(t, s3opts), pruned: map[string]bool{}}
	e := p.archiveEnv
	p.eng = newEngine(t)
	p.base = time.Now().UTC().Truncate(time.Hour).Add(-40 * time.Hour)
	// H0..H2 go to p_before, H3..H5 get partitions of their own: both ways
	// of dropping an archived hour happen.
	must(t, e.store.SplitPartitions(e.ctx, change.HourID(p.base)+3))
	w := newWorkload(18)
	p.createTables(t, w)
	e.waitCaughtUp(t)
	p.snaps = append(p.snaps, e.fullBackup(t).SnapshotID)
	starts, err := e.store.Starts(e.ctx, "main")
	must(t, err)
	s0 := e.current(t)
	if len(starts) != 1 || s0.Manifest.Position.Seq != starts[0].Seq {
		t.Fatalf("the full backup is at seq %d, want the capture start's (%+v)", s0.Manifest.Position.Seq, starts)
	}
	p.snapSeqs = append(p.snapSeqs, s0.Manifest.Position.Seq)
	p.rec = &recorder{t: t, e: e.backupEnv, defs: map[string]*schema.Table{}}
	p.rec.refreshDefs()

	for k := range pastHours {
		hour := p.base.Add(time.Duration(k) * time.Hour)
		if k == 0 {
			e.stampHour(t, hour, 5)
			w.firstRows(t, e.backupEnv, 20)
			p.record(t, k, hour.Add(5*time.Second), "the first rows")
		}
		for j := range 7 {
			sec := 60 + j*450
			e.stampHour(t, hour, sec)
			w.step(t, e.backupEnv, 4)
			p.record(t, k, hour.Add(time.Duration(sec)*time.Second), fmt.Sprintf("H%d step %d", k, j))
		}
		e.stampHour(t, hour, 3500)
		p.allTypesIn(t, k)
		p.acctIn(t, k)
		e.stampHour(t, time.Time{}, 0)
		if k == 1 || k == 3 {
			e.waitCaughtUp(t)
			res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
			if res.Refused || res.SnapshotID == "" {
				t.Fatalf("refresh at the end of H%d: %+v", k, res)
			}
			p.snaps, p.snapSeqs = append(p.snaps, res.SnapshotID), append(p.snapSeqs, res.Position.Seq)
			checkLiveExact(t, e.backupEnv, p.eng, e.current(t), fmt.Sprintf("refresh at the end of H%d", k))
		}
	}
	p.from = p.base.Add(3*time.Hour + 30*time.Second)

	for j := range 4 {
		w.step(t, e.backupEnv, 3)
		p.record(t, -1, time.Time{}, fmt.Sprintf("current hour step %d", j))
	}
	p.allTypesIn(t, -1)
	p.acctIn(t, -1)
	e.waitCaughtUp(t)
	p.orig = indexEvents(t, e.ctx, e.store, "main")
	for _, in := range append(p.past, p.now...) {
		p.locate(t, in)
	}
	p.archive(t)
	srcDir := filepath.Join(e.acts.BackupDir, "main")
	ids, err := snapshot.ListSnapshots(srcDir)
	must(t, err)
	res, err := snapshot.Prune(srcDir, ids[:len(ids)-1], nil) // all but the newest
	must(t, err)
	for _, id := range res.Removed {
		p.pruned[id] = true
	}
	if !p.pruned[p.snaps[0]] || !p.pruned[p.snaps[1]] || len(res.Kept) != 1 || res.Kept[0] != p.snaps[2] {
		t.Fatalf("prune kept %v, removed %v; snapshots %v", res.Kept, res.Removed, p.snaps)
	}
	p.bin = bin()
	t.Logf("%d events; %d instants in archived hours, %d in the current hour; snapshots %v (%v only on the store)",
		len(p.orig), len(p.past), len(p.now), p.snaps, res.Removed)
	return p
}

// buildDbtrailAsync starts the package's one build of the dbtrail binary
// (as buildDbtrail) while the test goes on; the function it returns waits
// for the build and returns the binary's path.
func buildDbtrailAsync(t *testing.T) func() string {
	t.Helper()
	go shared.dbtrail() // its error is reported by the returned function
	return func() string { return buildDbtrail(t) }
}

// createTables creates the workload's tables, the every-type table and
// app.acct, all empty: DDL writes no events, so a full backup right after
// sits at the capture start.
func (p *pastEnv) createTables(t *testing.T, w *workload) {
	t.Helper()
	create, _ := exporttest.AllTypesTable()
	w.createTables(t, p.backupEnv)
	w.exec(t, p.backupEnv, `CREATE TABLE acct (id INT PRIMARY KEY, owner VARCHAR(20), balance DECIMAL(10,2))`)
	p.allTypes(t, create)
}

// allTypes runs statements on the every-type table in the session mode its
// edge values need (no strict mode, UTC), then restores the session.
func (p *pastEnv) allTypes(t *testing.T, stmts ...string) {
	t.Helper()
	e := p.backupEnv
	w := &workload{}
	w.exec(t, e, "SET SESSION sql_mode = ''")
	w.exec(t, e, "SET SESSION time_zone = '+00:00'")
	for _, q := range stmts {
		w.exec(t, e, q)
	}
	w.exec(t, e, "SET SESSION sql_mode = DEFAULT")
	w.exec(t, e, "SET SESSION time_zone = DEFAULT")
}

// allTypesIn changes the every-type table in hour k (-1: the current
// hour): its first edge rows in H2; the others, an update to other edge
// values and a key change in H3; an update in H5; a delete and another key
// change in the current hour.
func (p *pastEnv) allTypesIn(t *testing.T, k int) {
	t.Helper()
	_, rows := exporttest.AllTypesTable()
	switch k {
	case 2:
		p.allTypes(t, "INSERT INTO alltypes VALUES "+strings.Join(rows[:2], ","))
	case 3:
		cols := liveDef(t, p.backupEnv, "alltypes").ColumnNames()
		var set []string
		for _, c := range cols[1:] {
			set = append(set, fmt.Sprintf("t.`%s` = s.`%s`", c, c))
		}
		p.allTypes(t, "INSERT INTO alltypes VALUES "+strings.Join(rows[2:], ","),
			"UPDATE alltypes t JOIN (SELECT * FROM alltypes WHERE id = 4) s SET "+strings.Join(set, ", ")+" WHERE t.id = 3",
			"UPDATE alltypes SET id = 50 WHERE id = 5")
	case 5:
		p.allTypes(t, "UPDATE alltypes SET vc = 'archived hour 5', ts = NULL WHERE id = 1")
	case -1:
		p.allTypes(t, "DELETE FROM alltypes WHERE id = 2", "UPDATE alltypes SET id = 60 WHERE id = 50")
	}
}

// acctIn changes app.acct in hour k (-1: the current hour): the row of
// key 1 is inserted in H0, updated in H1, moved to key 2 in H2, updated in
// H4 and in the current hour, moved to key 3 and deleted; key 7 is another
// row.
func (p *pastEnv) acctIn(t *testing.T, k int) {
	t.Helper()
	stmts := map[int][]string{
		0:  {"INSERT INTO acct VALUES (1, 'ann', 10.00), (7, 'bob', 1.00)"},
		1:  {"UPDATE acct SET balance = 12.50 WHERE id = 1"},
		2:  {"UPDATE acct SET id = 2 WHERE id = 1"},
		4:  {"UPDATE acct SET owner = 'ann b' WHERE id = 2"},
		-1: {"UPDATE acct SET balance = 3.00 WHERE id = 2", "UPDATE acct SET id = 3 WHERE id = 2", "UPDATE acct SET balance = 0 WHERE id = 7", "DELETE FROM acct WHERE id = 3"},
	}[k]
	for _, q := range stmts {
		(&workload{}).exec(t, p.backupEnv, q)
	}
}

// record records the model tables now, after a transaction committed at
// stamp in hour k.
func (p *pastEnv) record(t *testing.T, k int, stamp time.Time, note string) {
	t.Helper()
	in := &pastInstant{instant: p.rec.now(note), hour: k, stamp: stamp}
	file, pos, ok := strings.Cut(in.at[0], ":")
	if !ok {
		t.Fatalf("position %s", in.at[0])
	}
	in.pos.File = file
	_, err := fmt.Sscan(pos, &in.pos.Pos)
	must(t, err)
	if k < 0 {
		p.now = append(p.now, in)
	} else {
		p.past = append(p.past, in)
	}
}

// instantNamed is the archived instant recorded with note.
func (p *pastEnv) instantNamed(t *testing.T, note string) *pastInstant {
	t.Helper()
	for _, in := range p.past {
		if in.note == note {
			return in
		}
	}
	t.Fatalf("no instant %q", note)
	return nil
}

// locate finds the last event at or before the instant's position: its seq
// and GTID name the same state.
func (p *pastEnv) locate(t *testing.T, in *pastInstant) {
	t.Helper()
	var last change.Event
	for _, ev := range p.orig {
		c, err := binlogpos.Compare(ev.Pos().Coords(), in.pos)
		must(t, err)
		if c <= 0 && ev.Seq > last.Seq {
			last = ev
		}
	}
	if last.Seq == 0 || last.GTID == "" {
		t.Fatalf("%s: no event with a GTID at or before %s", in.note, in.pos)
	}
	in.seq, in.gtid = last.Seq, last.GTID
	if in.hour >= 0 && !last.CommitTime.Equal(in.stamp) {
		t.Fatalf("%s: its last event (seq %d) committed %s, stamped %s", in.note, last.Seq, last.CommitTime, in.stamp)
	}
}

// archive runs the Archive workflow: H0..H5 go to the store and leave the
// index; the current hour stays.
func (p *pastEnv) archive(t *testing.T) {
	t.Helper()
	e := p.archiveEnv
	res := e.runArchive(t, 24)
	if len(res.Hours) != pastHours {
		t.Fatalf("archived %+v", res.Hours)
	}
	for i, h := range res.Hours {
		if !h.Hour.Equal(p.base.Add(time.Duration(i)*time.Hour)) || h.Kept != "" {
			t.Fatalf("archived hour %d: %+v", i, h)
		}
	}
	recs, err := e.store.Archives(e.ctx, "main")
	must(t, err)
	for _, r := range recs {
		if !r.Confirmed() || r.DroppedAt.IsZero() {
			t.Fatalf("archive record %+v: not confirmed and dropped", r)
		}
	}
	left := indexEvents(t, e.ctx, e.store, "main")
	for _, ev := range left {
		if p.archived(ev.Seq) {
			t.Fatalf("seq %d of an archived hour (%s) is still in the index", ev.Seq, ev.CommitTime)
		}
	}
	if len(left) == 0 || len(left) == len(p.orig) {
		t.Fatalf("the index holds %d of %d events after the archive run", len(left), len(p.orig))
	}
}

// archived reports whether the event seq lies in an archived hour.
func (p *pastEnv) archived(seq uint64) bool {
	ev, ok := p.orig[seq]
	return ok && ev.CommitTime.Before(p.base.Add(pastHours*time.Hour))
}

// baseOf is the snapshot a moment whose cut is seq starts from: the newest
// at or before it.
func (p *pastEnv) baseOf(seq uint64) string {
	base := ""
	for i, s := range p.snapSeqs {
		if s <= seq {
			base = p.snaps[i]
		}
	}
	return base
}

// hourNames are the names of the archived hours as refusals give them.
func (p *pastEnv) hourNames() []string {
	var out []string
	for k := range pastHours {
		out = append(out, p.base.Add(time.Duration(k)*time.Hour).Format("2006-01-02T15Z"))
	}
	return out
}

// forms names an instant in one of four forms: 0 a time inside the second
// of its last commit (in one of several zones and notations), 1 the seq of
// its last event, 2 its binlog position, 3 its GTID.
func (in *pastInstant) form(t *testing.T, form int, rnd *rand.Rand) string {
	switch form {
	case 0:
		at := in.stamp.Add(time.Duration(rnd.IntN(1000)) * time.Millisecond)
		switch rnd.IntN(4) {
		case 0:
			return at.UTC().Format("2006-01-02 15:04:05.000000")
		case 1:
			return at.In(time.FixedZone("", -5*3600)).Format("2006-01-02T15:04:05.999-07:00")
		case 2:
			return at.UTC().Format("2006-01-02T15:04:05.999999999Z")
		default:
			loc, err := time.LoadLocation("Asia/Kolkata")
			must(t, err)
			return at.In(loc).Format("2006-01-02 15:04:05.999") + " Asia/Kolkata"
		}
	case 1:
		return fmt.Sprintf("seq:%d", in.seq)
	case 2:
		return in.pos.String()
	}
	return "gtid:" + in.gtid
}

// past is the source's whole past as the test process reads it, with
// archive as the archive location.
func (p *pastEnv) pastWith(archive storage.Store) moment.Past {
	return moment.Past{Source: "main", Index: p.store, SourceDir: filepath.Join(p.acts.BackupDir, "main"), Archive: archive}
}

// modelTableNames are the model tables as a selection names them.
func modelTableNames() []string {
	var out []string
	for _, tb := range modelTables {
		out = append(out, "app."+tb)
	}
	return out
}

// rebuildPast plans moment at over past and rebuilds the model tables, as
// canonical images with their copies, by table.
func (p *pastEnv) rebuildPast(t *testing.T, past moment.Past, at string) (map[string]map[string]int, moment.Plan, error) {
	t.Helper()
	a, err := when.Parse(at)
	must(t, err)
	plan, cat, err := past.Plan(p.ctx, a, moment.Selection{Tables: modelTableNames()})
	if err != nil {
		return nil, plan, err
	}
	rb := past.Rebuilder(p.eng, cat)
	out := map[string]map[string]int{}
	for _, tp := range plan.Tables {
		tb, err := rb.Open(p.ctx, tp, nil)
		if err != nil {
			return nil, plan, err
		}
		got := map[string]int{}
		err = tb.Rows(p.ctx, func(row []rowimage.Cell) error {
			img, err := rowimage.SQLImage(tb.Footer.Table, row)
			if err != nil {
				return err
			}
			got[string(img)]++
			return nil
		})
		tb.Close()
		if err != nil {
			return nil, plan, err
		}
		out[tp.Table] = got
	}
	return out, plan, nil
}

// checkTruth requires every model table of got to equal the instant's
// recorded rows.
func checkTruth(t *testing.T, in *pastInstant, at string, plan moment.Plan, got map[string]map[string]int) {
	t.Helper()
	if len(got) != len(modelTables) {
		t.Fatalf("%s (%s): %d tables rebuilt", at, in.note, len(got))
	}
	for _, tb := range modelTables {
		if err := sameRows(got[tb], in.truth[tb]); err != nil {
			t.Fatalf("%s (%s) table %s, cut %s, from snapshot %s: %v", at, in.note, tb, plan.Cut, plan.Base, err)
		}
	}
}

// exportWithin runs an Export workflow that times out after limit: a
// refusal must come at once, not after the retries of a store that is
// down.
func (p *pastEnv) exportWithin(t *testing.T, limit time.Duration, spec payload.ExportSpec) error {
	t.Helper()
	spec.Source = "main"
	run, err := temporalclient.StartWorkflow(p.ctx, p.c, client.StartWorkflowOptions{ID: payload.ExportWorkflowID("main", spec.Out), TaskQueue: payload.TaskQueue,
		WorkflowExecutionTimeout: limit}, workflows.Export, payload.ExportInput{ExportSpec: spec})
	must(t, err)
	return run.Get(p.ctx, nil)
}

// checkLiveExact is checkLive with FLOAT columns read exactly on the
// source (exactRows: MariaDB prints a FLOAT with six digits, while
// capture's images keep every bit of the float32).
func checkLiveExact(t *testing.T, e *backupEnv, eng *fold.Engine, snap *snapshot.Snapshot, step string) {
	t.Helper()
	for _, mt := range snap.Manifest.Tables {
		got, at := snapshotRows(t, e, eng, snap, mt.Schema, mt.Table)
		if err := sameRows(got, exactRows(t, e.src, at.Table)); err != nil {
			t.Fatalf("%s: snapshot %s table %s.%s (%s, chain %d files): %v", step, snap.Manifest.SnapshotID, mt.Schema, mt.Table, mt.Origin, len(mt.Chain), err)
		}
	}
}

// cli runs the dbtrail binary against the env's index with env added to
// its environment.
func (p *pastEnv) cli(env []string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(p.ctx, p.bin, args...)
	cmd.Env = append(append(os.Environ(), "DBTRAIL_INDEX_DSN="+p.indexDSN), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// keysEnv is the environment that gives the CLI the S3 server's keys and
// region the way a worker's environment does (no URL, no credentials file).
func (p *pastEnv) keysEnv() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + p.s3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + p.s3.SecretKey, "AWS_REGION=" + p.s3.Region}
}

// historyVersion is one line of `dbtrail history --json` (the API's
// RowVersion).
type historyVersion = api.RowVersion

// sameJSON reports whether two JSON texts are equal once compacted (nil
// and empty are equal).
func sameJSON(a, b []byte) bool {
	ca, cb := compactJSON(a), compactJSON(b)
	return ca == cb
}

func compactJSON(b []byte) string {
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return "invalid: " + string(b)
	}
	return buf.String()
}
