package mydumper

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// sourceThread is one busy thread of the source's processlist.
type sourceThread struct {
	ID, Seconds                 int64
	User, Command, State, Query string
}

func (t sourceThread) String() string {
	return fmt.Sprintf("thread %d (%s) %s %ds %q: %s", t.ID, t.User, t.Command, t.Seconds, t.State, t.Query)
}

// sourceThreads lists the source's threads that are running something
// (not sleeping, not a replica's binlog dump, not a server daemon), the
// longest first, at most 10. A dump that makes no progress uses it to say
// what it waits behind (FLUSH TABLES WITH READ LOCK behind a long write)
// or that nothing on the source is busy (mydumper waits on itself).
func sourceThreads(ctx context.Context, dsn string) ([]sourceThread, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT ID, USER, COMMAND, TIME, COALESCE(STATE, ''), COALESCE(LEFT(INFO, 120), '')
		FROM information_schema.PROCESSLIST
		WHERE COMMAND NOT IN ('Sleep', 'Binlog Dump', 'Binlog Dump GTID', 'Daemon') AND ID <> CONNECTION_ID()
		ORDER BY TIME DESC LIMIT 10`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sourceThread
	for rows.Next() {
		var t sourceThread
		if err := rows.Scan(&t.ID, &t.User, &t.Command, &t.Seconds, &t.State, &t.Query); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// describeThreads is sourceThreads' answer as one clause of an error.
func describeThreads(threads []sourceThread, err error) string {
	switch {
	case err != nil:
		return "source threads unknown: " + err.Error()
	case len(threads) == 0:
		return "no other thread of the source is busy"
	}
	s := make([]string, len(threads))
	for i, t := range threads {
		s[i] = t.String()
	}
	return "busy threads of the source: " + strings.Join(s, "; ")
}
