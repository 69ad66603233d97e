package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestArchivedMoments: archived hours are part of every reader of the past
// (issue 18). Six hours of traffic stamped 40 hours ago are archived to an
// Object Lock bucket and dropped from the index (pastEnv); then:
//
//   - model: at 24 random instants inside the archived hours, named by
//     time, seq, binlog position or GTID in turn, every model table rebuilt
//     equals the recorded rows, the cut is the instant's transaction and
//     the base is the newest snapshot at or before it, two of them only on
//     the store; a .sql export of an archived moment (Export workflow)
//     loads into a scratch server that `dbtrail verify --at` (the CLI, the
//     archive location the index records, keys from the environment)
//     finds equal.
//   - changes: `export changes` from inside an archived hour to the latest
//     moment writes every table's changes equal to what the index held
//     before the archive run, the every-type table's among them.
//   - history: `dbtrail history --archive-url` of a row whose versions span
//     archived hours and the index, across two key changes, lists every
//     version as captured; so does DBTRAIL_ARCHIVE_URL, and so does no URL
//     at all (the location the index records, keys from the environment).
//   - refresh: a refresh whose window reaches hours archived since the
//     current snapshot folds them: published without a full backup, equal
//     to the live tables.
//   - floor: with the full backup at the capture start, a binlog position
//     inside an archived hour is answered at that position, not at the
//     floor; with the hour unreadable (a bucket without it, the store
//     stopped) it is refused naming the hour, in the test process, in the
//     CLI and in the Export workflow. It stops the store, so it runs last
//     but one.
//   - hour-named: with the store stopped, a time and a seq inside H0 are
//     refused naming H0, the hour that holds their transaction.
func TestArchivedMoments(t *testing.T) {
	p := newPastEnv(t)
	t.Run("model", p.testModel)
	t.Run("changes", p.testChanges)
	t.Run("history", p.testHistory)
	t.Run("refresh", p.testRefresh)
	t.Run("floor", p.testFloor)
	t.Run("hour-named", p.testHourNamed)
}

// testModel checks 24 archived instants and the current hour's, then one
// .sql export of an archived moment with verify --at.
func (p *pastEnv) testModel(t *testing.T) {
	rnd := rand.New(rand.NewPCG(18, 7))
	past := p.pastWith(p.remote)
	sourceDir := filepath.Join(p.acts.BackupDir, "main")
	var check []*pastInstant
	for _, i := range rnd.Perm(len(p.past))[:24] {
		check = append(check, p.past[i])
	}
	downloaded := map[string]bool{}
	forms := map[string]int{}
	for i, in := range append(check, p.now...) {
		at := in.form(t, i%4, rnd)
		if in.hour < 0 {
			at = in.form(t, 1+i%3, rnd) // the current hour: no stamped time
		}
		a, err := when.Parse(at)
		must(t, err)
		forms[string(a.Kind)]++
		want := p.baseOf(in.seq)
		_, statErr := os.Stat(snapshot.Folder(sourceDir).Snapshot(want))
		got, plan, err := p.rebuildPast(t, past, at)
		if err != nil {
			t.Fatalf("%s (%s, H%d): %v", at, in.note, in.hour, err)
		}
		if !plan.Cut.Landed || plan.Cut.Seq != in.seq || plan.Base != want {
			t.Fatalf("%s (%s): cut %s from snapshot %s; want the transaction of seq %d from snapshot %s", at, in.note, plan.Cut, plan.Base, in.seq, want)
		}
		checkTruth(t, in, at, plan, got)
		if os.IsNotExist(statErr) {
			downloaded[want] = true
		}
	}
	t.Logf("%d archived instants and %d of the current hour rebuilt equal to the recorded rows; forms %v; downloaded %v",
		len(check), len(p.now), forms, downloaded)
	if !downloaded[p.snaps[0]] || !downloaded[p.snaps[1]] {
		t.Fatalf("snapshots only on the store used as a base: %v, want %s and %s", downloaded, p.snaps[0], p.snaps[1])
	}

	// A .sql export of an archived moment through the Export workflow (the
	// worker's archive location), loaded into a scratch server: verify --at
	// in the CLI finds every table equal to the moment.
	in := p.instantNamed(t, "H2 step 6")
	at := in.form(t, 0, rnd)
	file := filepath.Join(t.TempDir(), "moment.sql")
	res, err := p.export(t, payload.ExportSpec{Format: payload.ExportSQL, At: at, Tables: modelTableNames(), Out: file})
	if err != nil {
		t.Fatalf(".sql export at %s (%s): %v", at, in.note, err)
	}
	if cut := res.Plan.Plan.Cut; cut.Seq != in.seq || len(res.Tables) != len(modelTables) {
		t.Fatalf(".sql export at %s: cut %s, %d tables; want seq %d", at, cut, len(res.Tables), in.seq)
	}
	scratch := testsuite.StartIndex(t)
	exporttest.LoadSQL(t, scratch, "", file)
	sdb, err := scratch.DB(p.ctx, "")
	must(t, err)
	defer sdb.Close()
	for _, tb := range modelTables {
		if err := sameRows(liveCountsDB(t, p.backupEnv, sdb, p.rec.defs[tb]), in.truth[tb]); err != nil {
			t.Fatalf("the scratch copy of %s at %s: %v", tb, at, err)
		}
	}
	args := []string{"verify", "--at", at, "--backup-dir", p.acts.BackupDir, "--source", "main"}
	for _, tb := range modelTableNames() {
		args = append(args, "--table", tb)
	}
	// No archive URL: the location the index records, the keys from the
	// environment.
	out, errOut, err := p.cli(append(p.keysEnv(), "DBTRAIL_SOURCE_DSN="+scratch.DSN("")), args...)
	if err != nil || strings.Count(out, "\nmatch ") != len(modelTables) {
		t.Fatalf("verify --at %s (the recorded archive location): %v\n%s%s", at, err, out, errOut)
	}
	t.Logf(".sql export at %s (%s) loaded; verify --at:\n%s", at, in.note, out)
}

// testChanges exports the changes from inside H3 to the latest moment.
func (p *pastEnv) testChanges(t *testing.T) {
	var after, upto uint64
	for _, ev := range p.orig {
		if ev.CommitTime.Before(p.from) {
			after = max(after, ev.Seq)
		}
		upto = max(upto, ev.Seq)
	}
	want := map[string][]change.Event{}
	for _, ev := range p.orig {
		if ev.Seq > after && ev.Seq <= upto {
			want[ev.Schema+"."+ev.Table] = append(want[ev.Schema+"."+ev.Table], ev)
		}
	}
	for _, evs := range want {
		slices.SortFunc(evs, func(a, b change.Event) int { return int(a.Seq) - int(b.Seq) })
	}
	var archived, indexed int
	for _, ev := range want["app.alltypes"] {
		if p.archived(ev.Seq) {
			archived++
		} else {
			indexed++
		}
	}
	if archived == 0 || indexed == 0 {
		t.Fatalf("the every-type table has %d changes archived and %d in the index in the range", archived, indexed)
	}

	out := filepath.Join(t.TempDir(), "changes")
	from := p.from.Format(time.RFC3339)
	res, err := p.export(t, payload.ExportSpec{Format: payload.ExportChanges, From: from, Until: "latest", Out: out})
	if err != nil {
		t.Fatalf("changes from %s (archived) until latest: %v", from, err)
	}
	r := res.Plan.Range
	if r == nil || r.From.Seq != after || r.Until.Seq != upto {
		t.Fatalf("range %+v; want seqs (%d, %d]", r, after, upto)
	}
	got := map[string][]snapshot.Change{}
	for _, tb := range res.Tables {
		name := tb.Schema + "." + tb.Table
		for _, f := range tb.Files {
			_, err := snapshot.ReadChanges(filepath.Join(out, f.Path), func(c snapshot.Change) error {
				got[name] = append(got[name], c)
				return nil
			})
			must(t, err)
		}
		if _, ok := want[name]; !ok && len(got[name]) > 0 {
			t.Fatalf("%s: %d changes exported, none in the range", name, len(got[name]))
		}
	}
	for name, evs := range want {
		if err := sameChanges(got[name], evs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d changes equal to the index's before the archive run", name, len(evs))
	}
	t.Logf("every-type table: %d changes from archived hours, %d from the index", archived, indexed)
}

// sameChanges requires got to be want's events, in order, field for field
// and image for image.
func sameChanges(got []snapshot.Change, want []change.Event) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d changes exported, the index held %d in the range", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Seq != w.Seq || g.Op != byte(w.Op) || g.PK != w.PK || g.PKBefore != w.PKBefore || !g.CommitTime.Equal(w.CommitTime) ||
			g.GTID != w.GTID || g.BinlogFile != w.BinlogFile || g.EndPos != w.EndPos ||
			!bytes.Equal(g.Before, w.Before) || !bytes.Equal(g.After, w.After) || (g.Before == nil) != (w.Before == nil) || (g.After == nil) != (w.After == nil) {
			return fmt.Errorf("change %d:\n got %+v\n     before %s\n     after  %s\nwant %+v\n     before %s\n     after  %s",
				i, g, g.Before, g.After, w, w.Before, w.After)
		}
	}
	return nil
}

// testHistory lists the history of app.acct's row through the CLI.
func (p *pastEnv) testHistory(t *testing.T) {
	var want []change.Event
	for _, ev := range p.orig {
		if ev.Table == "acct" && (slices.Contains([]string{"[1]", "[2]", "[3]"}, ev.PK) || slices.Contains([]string{"[1]", "[2]", "[3]"}, ev.PKBefore)) {
			want = append(want, ev)
		}
	}
	slices.SortFunc(want, func(a, b change.Event) int { return int(a.Seq) - int(b.Seq) })
	ops := map[change.Op]string{change.OpInsert: "insert", change.OpUpdate: "update", change.OpDelete: "delete"}
	var wantOps []string
	var archived int
	for _, ev := range want {
		wantOps = append(wantOps, ops[ev.Op])
		if p.archived(ev.Seq) {
			archived++
		}
	}
	if strings.Join(wantOps, ",") != "insert,update,update,update,update,update,delete" || archived != 4 {
		t.Fatalf("the row's events: %v, %d archived", wantOps, archived)
	}
	out, errOut, err := p.cli(nil, "history", "app.acct", "--key", "2", "--json", "--archive-url", p.url)
	if err != nil {
		t.Fatalf("history --archive-url: %v\n%s", err, errOut)
	}
	var got []historyVersion
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v historyVersion
		must(t, json.Unmarshal(sc.Bytes(), &v))
		got = append(got, v)
	}
	must(t, sc.Err())
	if len(got) != len(want) {
		t.Fatalf("history of key 2: %d versions, %d captured:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		g := got[i]
		if g.Seq != w.Seq || g.Op != ops[w.Op] || !g.CommitTime.Equal(w.CommitTime) || g.GTID != w.GTID || g.BinlogFile != w.BinlogFile ||
			g.EndPos != w.EndPos || !sameJSON(g.Key, []byte(w.PK)) || !sameJSON(g.KeyBefore, []byte(w.PKBefore)) ||
			!sameJSON(g.Before, w.Before) || !sameJSON(g.After, w.After) {
			t.Fatalf("version %d:\n got %+v\nwant %+v (before %s, after %s)", i, g, w, w.Before, w.After)
		}
	}
	// The same from the environment, as text, asked by the last key.
	out, errOut, err = p.cli([]string{"DBTRAIL_ARCHIVE_URL=" + p.url}, "history", "app.acct", "--key", "3")
	if err != nil || strings.Count(out, "\nseq ")+boolInt(strings.HasPrefix(out, "seq ")) != len(want) {
		t.Fatalf("history of key 3 (DBTRAIL_ARCHIVE_URL): %v\n%s%s", err, out, errOut)
	}
	// No archive URL: the location the index records for the archived
	// hours (as `dbtrail archives` prints it), the keys from the
	// environment, as the worker's.
	out, errOut, err = p.cli(p.keysEnv(), "history", "app.acct", "--key", "3", "--json")
	if err != nil || strings.Count(strings.TrimSpace(out), "\n")+1 != len(want) {
		t.Fatalf("history of key 3 (the recorded archive location): %v\n%s%s", err, out, errOut)
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v historyVersion
		must(t, json.Unmarshal([]byte(line), &v))
		if v.Seq != want[i].Seq || !sameJSON(v.After, want[i].After) || !sameJSON(v.Before, want[i].Before) {
			t.Fatalf("version %d from the recorded location: %+v, want seq %d", i, v, want[i].Seq)
		}
	}
	// Without keys the recorded location does not open, and the error says
	// which location and how to choose another.
	_, errOut, err = p.cli([]string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(t.TempDir(), "none"),
		"AWS_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none"), "AWS_EC2_METADATA_DISABLED=true"}, "history", "app.acct", "--key", "3")
	if err == nil || !strings.Contains(errOut, "the archive location the index records for source main") || !strings.Contains(errOut, "--archive-url") {
		t.Fatalf("history without keys for the recorded location: %v\n%s", err, errOut)
	}
	t.Logf("history of app.acct key 2: %d versions (%d from archived hours) equal to the captured events; the same from the recorded location", len(got), archived)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// testRefresh refreshes from S2 (end of H3) after H4 and H5 were archived
// and dropped.
func (p *pastEnv) testRefresh(t *testing.T) {
	cur := p.current(t)
	if cur.Manifest.SnapshotID != p.snaps[2] {
		t.Fatalf("current snapshot %s, want %s", cur.Manifest.SnapshotID, p.snaps[2])
	}
	recs, err := p.store.Archives(p.ctx, "main")
	must(t, err)
	dropped := 0
	for _, r := range recs {
		if !r.DroppedAt.IsZero() && r.LastSeq > cur.Manifest.Position.Seq {
			dropped++
		}
	}
	if dropped != 2 {
		t.Fatalf("%d dropped hours after the current snapshot (seq %d), want H4 and H5", dropped, cur.Manifest.Position.Seq)
	}
	res := p.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused || res.FullBackup != "" || res.SnapshotID == "" || res.Prev != p.snaps[2] {
		t.Fatalf("refresh over archived hours: %+v", res)
	}
	snap := p.current(t)
	for _, mt := range snap.Manifest.Tables {
		if mt.Origin == snapshot.OriginDump {
			t.Fatalf("%s.%s was dumped again by the refresh", mt.Schema, mt.Table)
		}
	}
	checkLiveExact(t, p.backupEnv, p.eng, snap, "refresh over archived hours")
	t.Logf("refresh %s from %s over 2 archived hours: %v", res.SnapshotID, res.Prev, res.Tables)
}

// testFloor answers a position in H0 from the snapshot at the capture
// start, then refuses it with the hour unreadable.
func (p *pastEnv) testFloor(t *testing.T) {
	in := p.instantNamed(t, "H0 step 3")
	at := in.pos.String()
	got, plan, err := p.rebuildPast(t, p.pastWith(p.remote), at)
	if err != nil {
		t.Fatalf("%s (%s): %v", at, in.note, err)
	}
	if !plan.Cut.Landed || plan.Cut.Seq != in.seq || plan.Base != p.snaps[0] || plan.Cut.Seq <= p.snapSeqs[0] {
		t.Fatalf("%s: cut %s from %s; want seq %d from %s, after the floor %d", at, plan.Cut, plan.Base, in.seq, p.snaps[0], p.snapSeqs[0])
	}
	checkTruth(t, in, at, plan, got)
	if countRows(in.truth["ints"]) == 0 {
		t.Fatal("the instant's ints is empty, like the floor's")
	}

	// A bucket without the archive: the hour's file is missing.
	must(t, p.s3.CreateBucket(p.ctx, "elsewhere", false, 0))
	wrongURL := p.s3.BucketURL("elsewhere", "arch")
	wrong, err := storage.Open(p.ctx, wrongURL, storage.Options{})
	must(t, err)
	_, _, err = p.rebuildPast(t, p.pastWith(wrong), at)
	p.refusedNamingHour(t, err, "", at+" with a bucket without the archive")
	_, errOut, err := p.cli([]string{"DBTRAIL_SOURCE_DSN=" + p.source.DSN("")},
		"verify", "--at", at, "--backup-dir", p.acts.BackupDir, "--archive-url", wrongURL)
	if err == nil || !strings.Contains(errOut, string(moment.CodeArchive)) || !p.namesHour(errOut) {
		t.Fatalf("verify --at %s with a bucket without the archive: %v\n%s", at, err, errOut)
	}

	// The store stopped. A position names no hour until a file is read:
	// the refusal names one the lookup needed.
	must(t, p.s3.Kill())
	_, _, err = p.rebuildPast(t, p.pastWith(p.remote), at)
	p.refusedNamingHour(t, err, "connection refused", at+" with the store stopped")
	err = p.exportWithin(t, 2*time.Minute, payload.ExportSpec{Format: payload.ExportParquet, At: at, Out: filepath.Join(t.TempDir(), "x")})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != payload.ErrPositionNotCovered || !strings.Contains(err.Error(), string(moment.CodeArchive)) || !p.namesHour(err.Error()) {
		t.Fatalf("export at %s with the store stopped: %v", at, err)
	}
	t.Logf("the Export workflow refused: %v", err)
}

// testHourNamed: with the store stopped (testFloor), a time and a seq
// inside H0 are refused naming H0, the moment's own hour: a time's hour is
// its commit hour, the hour of the archive file that holds it, and a
// seq's is the hour whose recorded seqs hold it; no later hour can hold
// their transaction.
func (p *pastEnv) testHourNamed(t *testing.T) {
	in := p.instantNamed(t, "H0 step 3")
	rnd := rand.New(rand.NewPCG(18, 2))
	for form, name := range []string{"time", "seq"} {
		at := in.form(t, form, rnd)
		t.Run(name, func(t *testing.T) {
			_, _, err := p.rebuildPast(t, p.pastWith(p.remote), at)
			p.refusedNamingHour(t, err, "archived hour "+p.hourNames()[0], at+" with the store stopped")
		})
	}
}

// refusedNamingHour requires err to refuse the moment as an archived hour
// unreadable, naming one of the archived hours and the cause.
func (p *pastEnv) refusedNamingHour(t *testing.T, err error, cause, what string) {
	t.Helper()
	r, ok := moment.IsRefused(err)
	if !ok || r.Code != moment.CodeArchive || !p.namesHour(err.Error()) || !strings.Contains(err.Error(), cause) {
		t.Fatalf("%s: want a refusal %q naming an archived hour (%v) and %q, got %v", what, moment.CodeArchive, p.hourNames(), cause, err)
	}
	t.Logf("%s refused: %v", what, err)
}

func (p *pastEnv) namesHour(s string) bool {
	for _, h := range p.hourNames() {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}
