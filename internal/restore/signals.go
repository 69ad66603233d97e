package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/throttle"
)

// readSignals reads the throttle's inputs: every replica's replication
// state, the target's Threads_running and the throttle query's value.
func readSignals(ctx context.Context, target *sql.DB, replicas []*sql.DB, names []string, throttleQuery string) (throttle.Signals, error) {
	var s throttle.Signals
	for i, r := range replicas {
		s.Replicas = append(s.Replicas, replicaState(ctx, r, names[i]))
	}
	var name, v string
	if err := target.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Threads_running'").Scan(&name, &v); err != nil {
		return s, fmt.Errorf("target Threads_running: %w", err)
	}
	s.ThreadsRunning, _ = strconv.Atoi(v)
	if throttleQuery != "" {
		var val sql.NullString
		if err := target.QueryRowContext(ctx, throttleQuery).Scan(&val); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return s, fail(KindBadInput, fmt.Errorf("--throttle-query %q: %w", throttleQuery, err))
		}
		s.HasThrottle = true
		if val.Valid {
			f, err := strconv.ParseFloat(strings.TrimSpace(val.String), 64)
			if err != nil {
				return s, fail(KindBadInput, fmt.Errorf("--throttle-query %q returned %q, not a number", throttleQuery, val.String))
			}
			s.Throttle = f
		}
	}
	return s, nil
}

// replicaState reads SHOW SLAVE STATUS of one replica.
func replicaState(ctx context.Context, db *sql.DB, name string) throttle.ReplicaState {
	st := throttle.ReplicaState{Name: name}
	rows, err := db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		st.Err = err.Error()
		return st
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		st.Err = err.Error()
		return st
	}
	if !rows.Next() {
		st.Err = "it is not a replica (SHOW SLAVE STATUS is empty)"
		return st
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		st.Err = err.Error()
		return st
	}
	get := func(c string) sql.NullString {
		for i, n := range cols {
			if strings.EqualFold(n, c) {
				return vals[i]
			}
		}
		return sql.NullString{}
	}
	io, sqlRunning, lag := get("Slave_IO_Running"), get("Slave_SQL_Running"), get("Seconds_Behind_Master")
	st.Running = io.String == "Yes" && sqlRunning.String == "Yes" && lag.Valid
	if lag.Valid {
		n, _ := strconv.Atoi(lag.String)
		st.Lag = time.Duration(n) * time.Second
	}
	return st
}
