package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/testsuite"
)

// count is how many times s is in what b collected.
func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// queryErr posts one query and returns the status and error answer.
func queryErr(t *testing.T, c apiClient, params string, req api.QueryRequest) (int, api.Error) {
	t.Helper()
	body, err := json.Marshal(req)
	must(t, err)
	var e errAnswer
	st := c.call("POST", "/v1/query"+params, string(body), &e)
	return st, e.Error
}

// TestAPIQueryBounds: `dbtrail serve` (a process, with the index and a
// change after the snapshot) bounds its queries. A 100 MB answer is
// refused by the byte cap (413 naming it) with the process's peak RSS
// growing less than the cap + 200 MiB; a statement that does not parse, or calls a
// function that changes logging, is refused before the live tail is even
// prepared from the index (serve's debug log counts the preparations), and
// a table function reading a file outside the folder is refused before any
// table's changes are staged; a statement whose planning is the work
// (a constant folded) answers 408 and DuckDB reports it interrupted, not
// finished. `dbtrail query` is sandboxed the same way by default.
func TestAPIQueryBounds(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t)
	e.exec(t, "CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)")
	e.exec(t, "INSERT INTO acct VALUES (1, 100), (2, 200)")
	e.fullBackup(t)
	e.exec(t, "UPDATE acct SET bal = 150 WHERE id = 1")
	e.waitCaughtUp(t)

	log := &lockedBuffer{}
	// DuckDB materializes a result (the driver does not stream): its
	// share is bounded by --query-memory-limit, beyond which it spills.
	c, cmd := startServeProc(t, e, bin, "ro-secret-of-the-bounds-test", log, "--log-level", "debug", "--query-memory-limit", "64MB")
	before, err := testsuite.PeakRSS(cmd.Process.Pid)
	must(t, err)

	// The byte cap, first, so the peak RSS is this answer's: 10,000 rows
	// of 10 kB.
	const capBytes = 16 << 20
	st, ae := queryErr(t, c, "?tail=false", api.QueryRequest{SQL: "SELECT repeat('x', 10000) || i FROM range(10000) t(i)", MaxRows: 10000, TimeoutMS: 60000})
	if st != 413 || ae.Code != api.CodeAnswerTooLarge || !strings.Contains(ae.Message, "16777216 bytes") {
		t.Fatalf("a 100 MB answer: %d %+v, want 413 %s naming the cap", st, ae, api.CodeAnswerTooLarge)
	}
	peak, err := testsuite.PeakRSS(cmd.Process.Pid)
	must(t, err)
	t.Logf("serve's peak RSS: %.1f MiB before, %.1f MiB after a 100 MB answer refused", float64(before)/(1<<20), float64(peak)/(1<<20))
	// serve's own peak before (Temporal's client, the index pool) is not
	// the answer's: what the answer added is bounded.
	if grew := peak - before; grew > capBytes+200<<20 {
		t.Fatalf("serve's peak RSS grew %d bytes answering, want below the cap + 200 MiB (%d)", grew, capBytes+200<<20)
	}

	// Refused before the tail is prepared from the index.
	for q, name := range map[string]string{"SELEC * FROM app.acct": "does not parse", "SELECT enable_logging()": "enable_logging",
		"SELECT * FROM app.acct, truncate_duckdb_logs()": "truncate_duckdb_logs", "SELECT 1; SELECT 2": "one statement"} {
		st, ae := queryErr(t, c, "", api.QueryRequest{SQL: q})
		if st != 400 || ae.Code != api.CodeQueryRefused || !strings.Contains(ae.Message, name) {
			t.Errorf("%s: %d %+v, want 400 %s naming %q", q, st, ae, api.CodeQueryRefused, name)
		}
	}
	if n := log.count("tail prepared"); n != 0 {
		t.Fatalf("refused statements prepared the tail %d times:\n%s", n, log)
	}
	// A table function reading a file outside the folder: refused, with
	// no table's changes staged.
	for _, q := range []string{"SELECT content FROM read_text('/etc/passwd')", "SELECT * FROM glob('/**')"} {
		if st, ae := queryErr(t, c, "", api.QueryRequest{SQL: q}); st != 400 || ae.Code != api.CodeQueryRefused {
			t.Errorf("%s: %d %+v, want 400 %s", q, st, ae, api.CodeQueryRefused)
		}
	}
	if n := log.count("tail staged"); n != 0 {
		t.Fatalf("refused statements staged a table's changes %d times:\n%s", n, log)
	}
	// The control: a statement reading the changed table stages it.
	if lines, _ := askAPI(t, c, "", "SELECT sum(bal) FROM app.acct"); len(lines) != 1 || lines[0] != "350" {
		t.Fatalf("the live answer: %v, want 350", lines)
	}
	if log.count("tail prepared") == 0 || log.count("tail staged") == 0 {
		t.Fatalf("a statement on the changed table did not stage it (the log does not show staging):\n%s", log)
	}

	// Planning is under the deadline: the constant is folded while the
	// plan is optimized; DuckDB stops at its interrupt.
	st, ae = queryErr(t, c, "?tail=false", api.QueryRequest{SQL: "SELECT length(repeat('x', 400000000))", TimeoutMS: 500})
	if st != 408 || ae.Code != api.CodeTimeout {
		t.Fatalf("the constant-folding statement: %d %+v, want 408 %s", st, ae, api.CodeTimeout)
	}
	for log.count("query interrupted at its time limit") == 0 {
		if e.ctx.Err() != nil {
			t.Fatalf("DuckDB never reported the statement interrupted:\n%s", log)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// `dbtrail query` is sandboxed by default.
	for _, q := range []string{"SELECT content FROM read_text('/etc/hostname')", "SELECT enable_logging()"} {
		out, err := exec.CommandContext(e.ctx, bin, "query", "--backup-dir", e.acts.BackupDir, "--tail=false", "--memory-limit", "256MB", q).Output()
		if err == nil {
			t.Errorf("dbtrail query %q answered: %q", q, out)
		}
	}
}
