package testsuite

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// StartTarget starts a server for a test to load into (a restore's
// target): binlog on (RoleSource's settings), so that StartReplica can
// replicate from it, with its own server_id.
func StartTarget(t testing.TB, serverID uint32) *Server {
	t.Helper()
	return StartServer(t, Options{Role: RoleSource, ServerID: serverID})
}

// StartReplica starts a server that replicates from primary (a real
// MariaDB replica: CHANGE MASTER TO primary's current binlog position,
// START SLAVE) and waits until both replication threads run. Stop it in
// t.Cleanup like any server.
func StartReplica(t testing.TB, primary *Server, serverID uint32) *Server {
	t.Helper()
	r := StartServer(t, Options{Role: RoleIndex, ServerID: serverID})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := replicate(ctx, r, primary); err != nil {
		t.Fatalf("testsuite: %v", err)
	}
	return r
}

// replicate points r at primary's current binlog position and waits for
// both replication threads to run.
func replicate(ctx context.Context, r, primary *Server) error {
	db, err := primary.DB(ctx, "")
	if err != nil {
		return err
	}
	defer db.Close()
	var file string
	var pos uint64
	var doDB, ignoreDB any
	if err := db.QueryRowContext(ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &doDB, &ignoreDB); err != nil {
		return fmt.Errorf("replica of %s: SHOW MASTER STATUS: %w", primary.Addr(), err)
	}
	change := fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='%s', MASTER_PASSWORD='%s', MASTER_LOG_FILE='%s', MASTER_LOG_POS=%d, MASTER_USE_GTID=no",
		primary.Port, primary.User, primary.Password, file, pos)
	if err := r.Exec(ctx, change, "START SLAVE"); err != nil {
		return fmt.Errorf("replica of %s: %w", primary.Addr(), err)
	}
	for {
		io, sqlT, err := ReplicaThreads(ctx, r)
		if err != nil {
			return err
		}
		if io == "Yes" && sqlT == "Yes" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replica of %s: threads IO %s, SQL %s: %w", primary.Addr(), io, sqlT, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ReplicaThreads returns Slave_IO_Running and Slave_SQL_Running of r.
func ReplicaThreads(ctx context.Context, r *Server) (io, sqlThread string, err error) {
	db, err := r.DB(ctx, "")
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", "", err
	}
	if !rows.Next() {
		return "", "", fmt.Errorf("replica %s: SHOW SLAVE STATUS is empty", r.Addr())
	}
	vals := make([]any, len(cols))
	for i := range vals {
		var s *string
		vals[i] = &s
	}
	if err := rows.Scan(vals...); err != nil {
		return "", "", err
	}
	for i, c := range cols {
		p := *(vals[i].(**string))
		if p == nil {
			continue
		}
		switch c {
		case "Slave_IO_Running":
			io = *p
		case "Slave_SQL_Running":
			sqlThread = *p
		}
	}
	return io, sqlThread, rows.Err()
}
