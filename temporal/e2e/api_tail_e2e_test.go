package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/api"
)

// startServe runs `dbtrail serve` (the binary) on e's Temporal, index and
// backup folder, with the read-only token ro, and returns its API client.
func startServe(t *testing.T, e *backupEnv, bin, ro string) apiClient {
	t.Helper()
	c, _ := startServeProc(t, e, bin, ro, os.Stderr)
	return c
}

// startServeProc is startServe with serve's log written to logTo and
// extra flags, returning the process too.
func startServeProc(t *testing.T, e *backupEnv, bin, ro string, logTo io.Writer, extra ...string) (apiClient, *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	must(t, ln.Close())
	ctx, cancel := context.WithCancel(e.ctx)
	args := append([]string{"serve", "--backup-dir", e.acts.BackupDir, "--temporal-addr", e.frontend,
		"--api-addr", addr, "--query-memory-limit", "256MB"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN, "DBTRAIL_API_TOKENS=ro "+ro+" viewer")
	cmd.Stderr = logTo
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cancel(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "dbtrail serve is running") {
			go func() {
				for sc.Scan() {
				}
			}()
			return apiClient{t: t, url: "http://" + addr, token: ro}, cmd
		}
	}
	t.Fatalf("dbtrail serve ended before it ran: %v", sc.Err())
	return apiClient{}, nil
}

// askAPI posts sql to /v1/query (with params) and returns the answer's
// rows as text lines and its cut.
func askAPI(t *testing.T, c apiClient, params, sql string) ([]string, api.QueryAnswer) {
	t.Helper()
	body, err := json.Marshal(api.QueryRequest{SQL: sql, MaxRows: 1000})
	must(t, err)
	var a api.QueryAnswer
	if st := c.call("POST", "/v1/query"+params, string(body), &a); st != 200 {
		t.Fatalf("POST /v1/query%s %q: %d", params, sql, st)
	}
	var lines []string
	for _, r := range a.Rows {
		var vals []any
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		must(t, dec.Decode(&vals))
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = fmt.Sprint(v)
			}
		}
		lines = append(lines, strings.Join(parts, ","))
	}
	return lines, a
}

// TestAPIQueryTail: `dbtrail serve` with the index answers POST /v1/query
// with the live tail: after a snapshot, a transaction that changes a keyed
// and a keyless table is in the answer of a query of both, which names that
// transaction's GTID and equals the source; `?tail=false` answers the
// snapshot's rows and names its position; `?snapshot=` with `tail=true` is
// refused; the sandbox still refuses other files; `?at=gtid:G` answers the
// rows of then after the data moved on, a moment beyond capture is refused
// with the reason; after an ALTER TABLE the answer is the snapshot's, with
// the reason.
func TestAPIQueryTail(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t)
	for _, q := range []string{
		"CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)",
		"CREATE TABLE tags (a INT, b VARCHAR(5))",
		"INSERT INTO acct VALUES (1, 100), (2, 200), (3, 300)",
		"INSERT INTO tags VALUES (1, 'x'), (1, 'x')",
	} {
		e.exec(t, q)
	}
	snap := e.fullBackup(t)
	const sql = "SELECT 'acct', count(*), sum(bal) FROM app.acct UNION ALL SELECT 'tags', count(*), count(b) FROM app.tags ORDER BY 1"
	const live = "SELECT 'acct', count(*), sum(bal) FROM acct UNION ALL SELECT 'tags', count(*), count(b) FROM tags ORDER BY 1"
	atSnapshot := liveLines(t, e, live)

	conn, err := e.src.Conn(e.ctx)
	must(t, err)
	defer conn.Close()
	tx, err := conn.BeginTx(e.ctx, nil)
	must(t, err)
	for _, q := range []string{"UPDATE acct SET bal = bal - 50 WHERE id = 1", "UPDATE acct SET bal = bal + 50, id = 20 WHERE id = 2",
		"INSERT INTO acct VALUES (4, 7)", "DELETE FROM tags WHERE b = 'x' LIMIT 1", "INSERT INTO tags VALUES (2, NULL)"} {
		if _, err := tx.ExecContext(e.ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(t, tx.Commit())
	var gtid string
	must(t, conn.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&gtid))
	e.waitCaughtUp(t)
	now := liveLines(t, e, live)
	if slices.Equal(now, atSnapshot) {
		t.Fatalf("the transaction changed nothing the query sees: %v", now)
	}

	c := startServe(t, e, bin, "ro-api-tail-secret-0123456789")
	got, a := askAPI(t, c, "", sql)
	if !slices.Equal(got, now) || !a.Cut.Tail || a.Cut.GTID != gtid || a.Cut.Events != 5 || a.Cut.Tables != 2 ||
		a.Cut.Committed == nil || a.Snapshot != snap.SnapshotID || !strings.Contains(a.Cut.Text, "GTID "+gtid) {
		t.Fatalf("with the tail: rows %v (source %v), snapshot %s, cut %+v (want GTID %s)", got, now, a.Snapshot, a.Cut, gtid)
	}
	t.Logf("tail: %s", a.Cut.Text)
	got, a = askAPI(t, c, "?tail=false", sql)
	if !slices.Equal(got, atSnapshot) || a.Cut.Tail || a.Cut.Seq != snap.Position.Seq || a.Cut.GTID != snap.Position.GTID ||
		!strings.Contains(a.Cut.Text, "no tail") {
		t.Fatalf("tail=false: rows %v (snapshot %v), cut %+v (snapshot at %s)", got, atSnapshot, a.Cut, snap.Position)
	}
	var refused errAnswer
	if st := c.call("POST", "/v1/query?snapshot="+snap.SnapshotID+"&tail=true", `{"sql": "SELECT 1"}`, &refused); st != 400 ||
		refused.Error.Field != "tail" {
		t.Fatalf("snapshot with tail=true: %d %+v", st, refused)
	}
	if st := c.call("POST", "/v1/query", `{"sql": "SELECT * FROM read_csv('/etc/passwd')"}`, &refused); st != 400 ||
		refused.Error.Code != api.CodeQueryRefused {
		t.Fatalf("a file outside the backup folder through the tail's sandbox: %d %+v", st, refused)
	}

	// A column added after the snapshot is folded: the tail stays live.
	e.exec(t, "ALTER TABLE tags ADD COLUMN memo VARCHAR(10) NULL")
	e.exec(t, "INSERT INTO acct VALUES (5, 1)")
	got, a = askAPI(t, c, "", sql)
	if now := liveLines(t, e, live); !slices.Equal(got, now) || !a.Cut.Tail {
		t.Fatalf("after ADD COLUMN: rows %v (source %v), cut %+v", got, now, a.Cut)
	}
	// ?at: the tables at a moment of the past, after the data moved on; a
	// moment beyond capture is refused with the reason; a moment with the
	// snapshot alone, or not a moment, is a bad request.
	got, a = askAPI(t, c, "?at=gtid:"+gtid, sql)
	if !slices.Equal(got, now) || a.Cut.GTID != gtid || !strings.Contains(a.Cut.Text, "GTID "+gtid) {
		t.Fatalf("at gtid:%s: rows %v (source then %v), cut %+v", gtid, got, now, a.Cut)
	}
	if st := c.call("POST", "/v1/query?at=seq:999999999", `{"sql": "SELECT 1"}`, &refused); st != 400 ||
		refused.Error.Code != api.CodeQueryRefused || !strings.Contains(refused.Error.Message, "999999999") {
		t.Fatalf("a moment beyond capture: %d %+v", st, refused)
	}
	for _, q := range []string{"?at=gtid:" + gtid + "&tail=false", "?at=gtid:" + gtid + "&snapshot=" + snap.SnapshotID, "?at=not-a-moment"} {
		if st := c.call("POST", "/v1/query"+q, `{"sql": "SELECT 1"}`, &refused); st != 400 || refused.Error.Field != "at" {
			t.Fatalf("%s: %d %+v", q, st, refused)
		}
	}

	// A schema change the fold cannot prove: the snapshot's answer, and why.
	e.exec(t, "ALTER TABLE tags MODIFY a VARCHAR(10)")
	e.exec(t, "INSERT INTO acct VALUES (6, 1)")
	got, a = askAPI(t, c, "", sql)
	if !slices.Equal(got, atSnapshot) || a.Cut.Tail || !strings.Contains(a.Cut.Reason, "app.tags") ||
		!strings.Contains(a.Cut.Reason, "ALTER") || a.Cut.Seq != snap.Position.Seq {
		t.Fatalf("after the ALTER: rows %v (snapshot %v), cut %+v", got, atSnapshot, a.Cut)
	}
	t.Logf("after the ALTER: %s", a.Cut.Text)
}
