package sqlport

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/api"
)

// slowStatement runs until it is interrupted (far longer than any test).
const slowStatement = "SELECT sum(i) FROM range(1000000000000) t(i)"

// wantError fails t unless err is MySQL error code.
func wantError(t *testing.T, what string, err error, code uint16) {
	t.Helper()
	var my *gomysql.MySQLError
	if !errors.As(err, &my) || my.Number != code {
		t.Errorf("%s: %v, want error %d", what, err, code)
	}
}

func TestPortStatementTimeout(t *testing.T) {
	addr := startPortCfg(t, func(c *Config) { c.Timeout = 2 * time.Second }, ordersTable)
	db := openPort(t, addr, "viewer", testSecret)
	_, err := db.Query(slowStatement)
	wantError(t, "a statement past its time limit", err, 1317)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM shop.orders").Scan(&n); err != nil || n != 3 {
		t.Errorf("the next statement: %d, %v", n, err)
	}
}

func TestPortKill(t *testing.T) {
	addr := startPort(t)
	ctx := context.Background()
	victim := openPort(t, addr, "viewer", testSecret)
	killer := openPort(t, addr, "viewer", testSecret)
	other := openPort(t, addr, "other", otherSecret)
	var id int64
	if err := victim.QueryRow("SELECT CONNECTION_ID()").Scan(&id); err != nil || id == 0 {
		t.Fatalf("CONNECTION_ID() = %d, %v", id, err)
	}
	_, err := other.Exec("KILL QUERY ?", id)
	wantError(t, "KILL QUERY of another user's connection", err, 1095)
	_, err = killer.Exec("KILL QUERY 4000000000")
	wantError(t, "KILL QUERY of an unknown id", err, 1094)

	// KILL QUERY: the statement ends with 1317, the connection stays.
	err = killWhileRunning(t, ctx, victim, killer, "KILL QUERY ?", id)
	wantError(t, "the killed statement", err, 1317)
	var n int
	if err := victim.QueryRow("SELECT count(*) FROM shop.orders").Scan(&n); err != nil || n != 3 {
		t.Errorf("after KILL QUERY the connection answers: %d, %v", n, err)
	}

	// KILL: the statement ends and the connection is closed.
	conn, err := victim.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var cid int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&cid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := conn.QueryContext(ctx, slowStatement); done <- err }()
	if err := killUntil(killer, done, "KILL ?", cid); err == nil {
		t.Error("the statement of a killed connection answered")
	}
	if err := conn.PingContext(ctx); err == nil {
		t.Error("a killed connection still answers")
	}
}

// killWhileRunning runs the slow statement on victim and sends kill (with
// id) from killer until it ends; it returns the statement's error.
func killWhileRunning(t *testing.T, ctx context.Context, victim, killer *sql.DB, kill string, id int64) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		rows, err := victim.QueryContext(ctx, slowStatement)
		if err == nil {
			rows.Close()
		}
		done <- err
	}()
	return killUntil(killer, done, kill, id)
}

// killUntil sends kill from killer every 50 ms (a KILL before the
// statement starts finds none to cancel) until done reports.
func killUntil(killer *sql.DB, done <-chan error, kill string, id int64) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			killer.Exec(kill, id)
		}
	}
}

func TestPortBounds(t *testing.T) {
	slots := api.NewQuerySlots(1)
	addr := startPortCfg(t, func(c *Config) {
		c.MaxBytes, c.MaxRows, c.Slots, c.Timeout = 40, 2, slots, 2*time.Second
	}, ordersTable)
	db := openPort(t, addr, "viewer", testSecret)
	_, err := db.Query("SELECT * FROM shop.orders WHERE id < 3")
	wantError(t, "an answer over the byte cap", err, 1104)
	_, err = db.Query("SELECT id FROM shop.orders")
	wantError(t, "an answer over the row cap", err, 1105)
	var id int
	if err := db.QueryRow("SELECT id FROM shop.orders WHERE id = 1").Scan(&id); err != nil || id != 1 {
		t.Errorf("an answer within the bounds: %d, %v", id, err)
	}
	// Every slot taken (by the API, in dev): the statement waits until its
	// time limit, then 1317.
	if err := slots.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = db.Query("SELECT id FROM shop.orders WHERE id = 1")
	slots.Release()
	wantError(t, "a statement with no free slot", err, 1317)
}
