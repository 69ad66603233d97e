package e2e

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// loadTables are the tables of the port's load test, each with the query
// that reads every column in key order on the source and through the port
// alike (values as text: integers, DECIMAL, strings, NULL).
var loadTables = map[string]string{
	"ld.acct": "SELECT id, bal, note FROM ld.acct ORDER BY id",
	"ld.pair": "SELECT k1, k2, qty, tag FROM ld.pair ORDER BY k1, k2",
}

// loadLookup is a lookup by key of the port's load test: the statement and
// its key.
type loadLookup struct {
	q    string
	args []any
}

func (l loadLookup) String() string { return fmt.Sprintf("%s %v", l.q, l.args) }

// loadLookups are lookups by every key column of both tables: keys the
// writers change (ld.acct's 1 to 300, ld.pair's k1 and k2 0 to 19), kept
// since the backup (ld.pair's k1 above 9 are never written) and never
// present.
func loadLookups() []loadLookup {
	var out []loadLookup
	for _, id := range []int{1, 2, 17, 50, 99, 150, 199, 200, 201, 250, 299, 300, 301} {
		out = append(out, loadLookup{"SELECT id, bal, note FROM ld.acct WHERE id = ?", []any{id}})
	}
	for _, k := range [][2]int{{0, 0}, {3, 7}, {5, 19}, {9, 9}, {12, 4}, {20, 0}} {
		out = append(out, loadLookup{"SELECT k1, k2, qty, tag FROM ld.pair WHERE k1 = ? AND k2 = ?", []any{k[0], k[1]}})
	}
	return out
}

// loadPosition is a recorded position of the source: its binlog
// coordinates, every table's digest and every lookup's there, read in one
// consistent snapshot.
type loadPosition struct {
	file    string
	pos     uint64
	digests map[string]string
	lookups map[string]string
}

// tableDigest is the SHA-256 of q's rows on c in order, every column's text
// (NULL apart from any text), and the row count.
func tableDigest(ctx context.Context, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, args ...any) (string, error) {
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	h := sha256.New()
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		for _, v := range vals {
			if v.Valid {
				fmt.Fprintf(h, "%d:%s|", len(v.String), v.String)
			} else {
				h.Write([]byte("NULL|"))
			}
		}
		h.Write([]byte("\n"))
		n++
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d rows %s", n, hex.EncodeToString(h.Sum(nil))[:16]), nil
}

// recordPosition reads, in one transaction WITH CONSISTENT SNAPSHOT, the
// binlog position that snapshot is at (MariaDB's binlog_snapshot_file and
// binlog_snapshot_position) and every table's digest.
func recordPosition(t *testing.T, e *backupEnv) loadPosition {
	t.Helper()
	c, err := e.src.Conn(e.ctx)
	must(t, err)
	defer c.Close()
	_, err = c.ExecContext(e.ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
	must(t, err)
	defer c.ExecContext(e.ctx, "ROLLBACK")
	p := loadPosition{digests: map[string]string{}, lookups: map[string]string{}}
	var name, value string
	must(t, c.QueryRowContext(e.ctx, "SHOW STATUS LIKE 'binlog_snapshot_file'").Scan(&name, &p.file))
	must(t, c.QueryRowContext(e.ctx, "SHOW STATUS LIKE 'binlog_snapshot_position'").Scan(&name, &value))
	_, err = fmt.Sscan(value, &p.pos)
	must(t, err)
	for table, q := range loadTables {
		p.digests[table], err = tableDigest(e.ctx, c, q)
		must(t, err)
	}
	for _, l := range loadLookups() {
		p.lookups[l.String()], err = tableDigest(e.ctx, c, l.q, l.args...)
		must(t, err)
	}
	return p
}

// loadWriter changes both tables in random transactions until ctx ends.
func loadWriter(ctx context.Context, db *sql.DB, seed uint64) error {
	rnd := rand.New(rand.NewPCG(seed, 33))
	for ctx.Err() == nil {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			break
		}
		deadlocked := false
		for range 1 + rnd.IntN(4) {
			id, k1, k2 := 1+rnd.IntN(300), rnd.IntN(20), rnd.IntN(20)
			var q string
			var args []any
			switch rnd.IntN(6) {
			case 0:
				q, args = "DELETE FROM ld.acct WHERE id = ?", []any{id}
			case 1:
				q, args = "REPLACE INTO ld.acct VALUES (?, ?, ?)", []any{id, fmt.Sprintf("%d.%02d", rnd.IntN(10000)-5000, rnd.IntN(100)), nullOr(rnd, fmt.Sprintf("n%d", rnd.IntN(1000)))}
			case 2:
				q, args = "UPDATE ld.acct SET bal = bal + 1.25 WHERE id = ?", []any{id}
			case 3:
				q, args = "DELETE FROM ld.pair WHERE k1 = ? AND k2 = ?", []any{k1, k2}
			default:
				q, args = "INSERT INTO ld.pair VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE qty = qty + 1, tag = VALUES(tag)",
					[]any{k1, k2, rnd.IntN(100), nullOr(rnd, strings.Repeat("t", rnd.IntN(5)))}
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				tx.Rollback()
				if ctx.Err() != nil {
					return nil
				}
				// The two writers' transactions may deadlock (InnoDB rolls
				// one back): that transaction did not happen, the next goes on.
				var me *gomysql.MySQLError
				if errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205) {
					deadlocked = true
					break
				}
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		if deadlocked {
			continue
		}
		if err := tx.Commit(); err != nil && ctx.Err() == nil {
			var me *gomysql.MySQLError
			if errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205) {
				continue
			}
			return err
		}
	}
	return nil
}

func nullOr(rnd *rand.Rand, s string) any {
	if rnd.IntN(5) == 0 {
		return nil
	}
	return s
}

// TestSQLPortUnderLoad: two writers change two tables (one with a
// composite key) in random transactions after a full backup; at six
// random moments a consistent snapshot of the source records its binlog
// position and every table's digest. With the writers still running, the
// port, on two connections at each recorded position, reading every table
// twice (from the view, then through the table's base at the snapshot
// with the changes up to the cut laid over it, which the second connection
// attaches), answers every table and every lookup by key (changed keys,
// kept keys, absent keys) with the recorded digest, and @@dbtrail_cut
// names that position.
func TestSQLPortUnderLoad(t *testing.T) {
	e := newBackupEnv(t)
	e.execAll(t,
		"CREATE DATABASE ld",
		"CREATE TABLE ld.acct (id INT UNSIGNED PRIMARY KEY, bal DECIMAL(12,2) NOT NULL, note VARCHAR(20))",
		"CREATE TABLE ld.pair (k1 INT NOT NULL, k2 INT NOT NULL, qty INT NOT NULL, tag VARCHAR(8), PRIMARY KEY (k1, k2))",
		"INSERT INTO ld.acct SELECT seq, seq * 1.5, CONCAT('a', seq) FROM seq_1_to_200",
		"INSERT INTO ld.pair SELECT seq DIV 20, seq MOD 20, seq, NULL FROM seq_0_to_199",
	)
	e.fullBackup(t)

	ctx, stop := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- loadWriter(ctx, e.src, uint64(i+1))
		}()
	}
	defer func() {
		stop()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("writer: %v", err)
			}
		}
	}()
	rnd := rand.New(rand.NewPCG(7, 7))
	var recorded []loadPosition
	for range 6 {
		time.Sleep(time.Duration(100+rnd.IntN(400)) * time.Millisecond)
		recorded = append(recorded, recordPosition(t, e))
	}
	for table := range loadTables {
		seen := map[string]bool{}
		for _, p := range recorded {
			seen[p.digests[table]] = true
		}
		if len(seen) < 2 {
			t.Fatalf("%s is the same at every recorded position: the writers changed nothing", table)
		}
	}
	e.waitCaughtUp(t)

	addr := startSQLPort(t, e)
	db, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/?interpolateParams=true", portSecret, addr))
	must(t, err)
	defer db.Close()
	for i, p := range recorded {
		at := fmt.Sprintf("%s:%d", p.file, p.pos)
		for conn := range 2 {
			c, err := db.Conn(e.ctx)
			must(t, err)
			_, err = c.ExecContext(e.ctx, "SET @@dbtrail_at = '"+at+"'")
			must(t, err)
			var cut string
			must(t, c.QueryRowContext(e.ctx, "SELECT @@dbtrail_cut").Scan(&cut))
			if !strings.Contains(cut, "binlog "+at) {
				t.Errorf("position %d (%s): @@dbtrail_cut %q does not name it", i, at, cut)
			}
			// Twice: the first connection's first read is the view's, its
			// second through the base (written then, at the first
			// position); the second connection's reads attach the base.
			for read := range 2 {
				for table, q := range loadTables {
					got, err := tableDigest(e.ctx, c, q)
					must(t, err)
					if got != p.digests[table] {
						t.Errorf("position %d (%s), connection %d, read %d: %s through the port is %s, the source's snapshot there %s", i, at, conn, read, table, got, p.digests[table])
					}
				}
				for _, l := range loadLookups() {
					got, err := tableDigest(e.ctx, c, l.q, l.args...)
					must(t, err)
					if want := p.lookups[l.String()]; got != want {
						t.Errorf("position %d (%s), connection %d, read %d: %s through the port is %s, the source's snapshot there %s", i, at, conn, read, l, got, want)
					}
				}
			}
			c.Close()
		}
	}
}
