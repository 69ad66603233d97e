package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// tailCounts opens a query session with the tail over past and returns
// count(*) of every model table and app.acct's count and sum(balance), as
// text, with the tail's state.
func tailCounts(t *testing.T, p *pastEnv, past moment.Past) ([]string, *tail.State) {
	t.Helper()
	o := views.SessionOptions{Options: views.Options{SourceDir: filepath.Join(p.acts.BackupDir, "main")}, MemoryLimit: "256MB", Threads: 1}
	s, st := openTailSession(t, p.ctx, o, past)
	defer s.Close()
	var out []string
	for _, q := range archivedCountQueries() {
		rows, _, err := s.Query(p.ctx, q[0])
		must(t, err)
		lines, err := rowTexts(rows)
		must(t, err)
		out = append(out, strings.Join(lines, ";"))
	}
	return out, st
}

// archivedCountQueries are the counts tailCounts reads: DuckDB's query
// on the views and MariaDB's on the source, with the same answer lines.
func archivedCountQueries() [][2]string {
	var qs [][2]string
	for _, tb := range modelTables {
		qs = append(qs, [2]string{"SELECT count(*) FROM app." + tb, "SELECT count(*) FROM " + tb})
	}
	return append(qs, [2]string{"SELECT count(*), CAST(sum(balance) AS VARCHAR) FROM app.acct", "SELECT count(*), sum(balance) FROM acct"})
}

// TestTailArchivedHours: the current snapshot is older than two hours the
// archive run moved to the store and dropped from the index, so the live
// tail's window reaches into them. Without an archive location the answer
// is the snapshot's, naming the hours and --archive-url (never the snapshot
// plus the index's later events only); with it (a tail.Reader over the
// archive, `dbtrail query --archive-url`) the tail reads them from the
// archive and equals the source at capture's checkpoint.
func TestTailArchivedHours(t *testing.T) {
	p := newPastEnv(t)
	cur := p.current(t).Manifest
	var source []string
	for _, q := range archivedCountQueries() {
		source = append(source, strings.ReplaceAll(strings.Join(liveLines(t, p.backupEnv, q[1]), ";"), ",", "|"))
	}

	_, st := tailCounts(t, p, p.pastWith(nil))
	if st.Live || st.Snapshot != cur.SnapshotID || !strings.Contains(st.Reason, string(moment.CodeArchive)) ||
		!strings.Contains(st.Reason, "--archive-url") || !strings.Contains(st.Reason, p.base.Add(4*time.Hour).Format("2006-01-02 15:00")) {
		t.Fatalf("without an archive location: %s", st)
	}
	t.Logf("without the archive: %s", st)

	got, st := tailCounts(t, p, p.pastWith(p.remote))
	if !st.Live || st.Events == 0 || strings.Join(got, " ") != strings.Join(source, " ") {
		t.Fatalf("with the archive: %v, source %v (%s)", got, source, st)
	}
	t.Logf("with the archive: %s", st)

	cp, ok, err := p.store.LoadCheckpoint(p.ctx, "main")
	must(t, err)
	if !ok || st.Cut.Seq != cp.LastSeq {
		t.Fatalf("the tail is cut at seq %d, capture's checkpoint at %d", st.Cut.Seq, cp.LastSeq)
	}
	args := []string{"query", "--backup-dir", p.acts.BackupDir, "--format", "csv", "--memory-limit", "256MB",
		"SELECT count(*) AS n FROM app.ints"}
	out, errOut, err := p.cli(nil, append(args, "--archive-url", p.url)...)
	if err != nil || out != "n\n"+source[0]+"\n" || !strings.Contains(errOut, fmt.Sprintf("seq %d (snapshot %s", cp.LastSeq, cur.SnapshotID)) {
		t.Fatalf("dbtrail query --archive-url: %v %q\n%s", err, out, errOut)
	}
	_, errOut, err = p.cli(nil, args...)
	if err != nil || !strings.Contains(errOut, "left out") || !strings.Contains(errOut, "--archive-url") {
		t.Fatalf("dbtrail query without --archive-url: %v\n%s", err, errOut)
	}
	tailViewsArchived(t, p, source, cp.LastSeq)
}

// tailViewsArchived: `dbtrail views --tail-dir` reads the dropped hours
// from --archive-url too, and its views.sql answers as the source; without
// the archive location it says the tail was left out and why.
func tailViewsArchived(t *testing.T, p *pastEnv, source []string, seq uint64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tail")
	out, errOut, err := p.cli(nil, "views", "--backup-dir", p.acts.BackupDir, "--tail-dir", dir, "--archive-url", p.url)
	if err != nil || !strings.Contains(out, fmt.Sprintf("seq %d", seq)) {
		t.Fatalf("dbtrail views --tail-dir --archive-url: %v\n%s%s", err, out, errOut)
	}
	text, err := os.ReadFile(filepath.Join(dir, views.FileName))
	must(t, err)
	duck := openDuck(t)
	_, err = duck.ExecContext(p.ctx, string(text))
	must(t, err)
	for i, q := range archivedCountQueries() {
		rows, err := duck.QueryContext(p.ctx, q[0])
		must(t, err)
		lines, err := rowTexts(rows)
		must(t, err)
		if got := strings.Join(lines, ";"); got != source[i] {
			t.Fatalf("views.sql of --tail-dir --archive-url: %s gives %s, the source %s", q[0], got, source[i])
		}
	}
	out, errOut, err = p.cli(nil, "views", "--backup-dir", p.acts.BackupDir, "--tail-dir", filepath.Join(t.TempDir(), "tail"))
	if err != nil || !strings.Contains(out+errOut, "left out") || !strings.Contains(out+errOut, "--archive-url") {
		t.Fatalf("dbtrail views --tail-dir without --archive-url: %v\n%s%s", err, out, errOut)
	}
}

// openTailSession opens a query session over o reading the live tail of
// past, as `dbtrail query` does, and returns it with the state of the tail
// it prepared.
func openTailSession(t *testing.T, ctx context.Context, o views.SessionOptions, past moment.Past) (*views.Session, *tail.State) {
	t.Helper()
	var st *tail.State
	r := &tail.Reader{Past: past}
	o.Tail = func(ctx context.Context, dir string) (*views.Tail, error) {
		var err error
		if st, err = r.Prepare(ctx, dir); err != nil {
			return nil, err
		}
		return st.Views, nil
	}
	s, err := views.OpenSession(ctx, o)
	must(t, err)
	return s, st
}
