package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/sqlport"
	tailpkg "github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/internal/when"
)

// Sizes of the sqlport benchmark's runs.
const (
	sqlLookups   = 300 // primary-key lookups timed on each side
	sqlAggRounds = 7   // aggregates timed on each side (the median counts)
	sqlSecret    = "bench-sqlport-secret-0123456789ab"
)

// benchSQLPort measures the time-travel SQL port (internal/sqlport)
// against the source server and `dbtrail query`, side by side in one run:
// an n-row table whose snapshot is followed by two windows of changes
// committed 90 s and 30 s ago, read at the moment one minute back (after
// the first window, before the second). (a) p50 of a primary-key lookup
// through the port ÷ the same lookup on a MariaDB holding the same table;
// (b) a full-table aggregate through the port ÷ the same statement on
// `dbtrail query`'s engine (a views session with the tail at the same
// moment).
func benchSQLPort(ctx context.Context, n int) ([]result, error) {
	env, dir, stop, err := startRefreshEnv(ctx, "sqlport")
	if err != nil {
		return nil, err
	}
	defer stop()
	began := time.Now()
	k := max(n/100, 1)
	tb, err := env.buildTable(n)
	if err != nil {
		return nil, err
	}
	env.acts.Sources[tb.source] = activities.Source{Name: tb.source}
	now := time.Now().UTC().Truncate(time.Second)
	if err := env.insertWindowAt(ctx, tb, k, func(int) time.Time { return now.Add(-90 * time.Second) }); err != nil {
		return nil, err
	}
	// A second window of another size (windows are kept by size).
	if err := env.insertWindowAt(ctx, tb, k+1, func(int) time.Time { return now.Add(-30 * time.Second) }); err != nil {
		return nil, err
	}
	if err := momentFacts(ctx, env, tb, tb.windows[k+1]); err != nil {
		return nil, err
	}
	src, err := sqlSourceTable(ctx, env, n)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fmt.Fprintf(os.Stderr, "sqlport: %d-row table with %d + %d changes, and its source copy, ready in %s\n", n, k, k+1, time.Since(began).Round(time.Millisecond))

	at := now.Add(-time.Minute).Format("2006-01-02 15:04:05")
	sourceDir := env.sourceDir(tb.source)
	past := moment.Past{Source: tb.source, Index: env.store, SourceDir: sourceDir}
	sess := views.SessionOptions{Options: views.Options{SourceDir: sourceDir}, MemoryLimit: "1GB", Threads: 2, Sandbox: true}
	port, stopPort, err := startBenchPort(ctx, dir, sess, &tailpkg.Reader{Past: past, MemoryLimit: "512MB"})
	if err != nil {
		return nil, err
	}
	defer stopPort()

	// (a) primary-key lookups.
	conn, err := port.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET @@dbtrail_at = '"+at+"'"); err != nil {
		return nil, fmt.Errorf("sqlport: SET @@dbtrail_at: %w", err)
	}
	var cut string
	if err := conn.QueryRowContext(ctx, "SELECT @@dbtrail_cut").Scan(&cut); err != nil {
		return nil, err
	}
	if want := strconv.FormatUint(tb.windows[k].cut, 10); !containsWord(cut, "seq "+want) {
		return nil, fmt.Errorf("sqlport: the port's cut at %s is %q, want seq %s", at, cut, want)
	}
	lookup := "SELECT id, a, b, c FROM app.t WHERE id = %d"
	first, _, err := timeLookup(ctx, conn, lookup, 1+n/2)
	if err != nil {
		return nil, err
	}
	staging, _, err := timeLookup(ctx, conn, lookup, 1+n/2)
	if err != nil {
		return nil, err
	}
	ids := make([]int, sqlLookups)
	for i := range ids {
		ids[i] = 1 + rand.IntN(n)
	}
	portTimes, err := lookups(ctx, conn, lookup, ids, rowAtT(n, k))
	if err != nil {
		return nil, fmt.Errorf("sqlport: through the port: %w", err)
	}
	srcConn, err := src.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer srcConn.Close()
	srcTimes, err := lookups(ctx, srcConn, "SELECT id, a, b, c FROM t WHERE id = %d", ids, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlport: on the source: %w", err)
	}
	conn2, err := port.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn2.Close()
	if _, err := conn2.ExecContext(ctx, "SET @@dbtrail_at = '"+at+"'"); err != nil {
		return nil, err
	}
	second, _, err := timeLookup(ctx, conn2, lookup, 1+n/3)
	if err != nil {
		return nil, err
	}
	pp50, sp50 := median(portTimes), median(srcTimes)
	lookRatio := pp50.Seconds() / sp50.Seconds()

	// (b) the full-table aggregate.
	agg := "SELECT count(*), sum(b), min(a), max(c) FROM app.t"
	var portAgg, queryAgg []time.Duration
	qs := sess
	r := tailpkg.Reader{Past: past, MemoryLimit: "512MB", At: mustAt(at)}
	qs.Tail = r.ViewsTail(nil)
	qsess, err := views.OpenSession(ctx, qs)
	if err != nil {
		return nil, err
	}
	defer qsess.Close()
	var portRow, queryRow string
	for range sqlAggRounds {
		d, row, err := timeAggPort(ctx, conn, agg)
		if err != nil {
			return nil, err
		}
		portAgg, portRow = append(portAgg, d), row
		d, row, err = timeAggQuery(ctx, qsess, agg)
		if err != nil {
			return nil, err
		}
		queryAgg, queryRow = append(queryAgg, d), row
	}
	if portRow != queryRow {
		return nil, fmt.Errorf("sqlport: the aggregate through the port is %q, on dbtrail query's session %q", portRow, queryRow)
	}
	pa, qa := median(portAgg), median(queryAgg)
	aggRatio := pa.Seconds() / qa.Seconds()

	// (b) cold: the aggregate as a one-shot question at another moment (10 s
	// back: after the second window), a new connection against a new
	// `dbtrail query` session.
	at2 := now.Add(-10 * time.Second).Format("2006-01-02 15:04:05")
	coldPort, coldQuery, err := coldAggregate(ctx, port, qs, past, at2, agg)
	if err != nil {
		return nil, err
	}
	coldRatio := coldPort.Seconds() / coldQuery.Seconds()
	return []result{
		{"sqlport: table rows", strconv.Itoa(n), "", fmt.Sprintf("app.t: a snapshot, then %s changes 90 s ago and %s 30 s ago in the index; read at T = one minute back (%s UTC)",
			thousands(k), thousands(k+1), at)},
		{"sqlport: pk lookup at T through the port, p50", fmtMicros(pp50), "", fmt.Sprintf("go-sql-driver, one connection at T, %d random ids, each checked against the row at T (the table read through its base: a key changed up to T through the overlay, any other from the base alone); p90 %s", sqlLookups, fmtMicros(percentile(portTimes, 0.9)))},
		{"sqlport: pk lookup on the source server, p50", fmtMicros(sp50), "", fmt.Sprintf("go-sql-driver, the same ids on a MariaDB (InnoDB) holding the same %s rows; p90 %s", thousands(n), fmtMicros(percentile(srcTimes, 0.9)))},
		judged("sqlport: ratio pk lookup port / source (p50)", fmt.Sprintf("%.1f", lookRatio), "", measured(lookRatio, atMost(20, "%.0f"))),
		{"sqlport: first lookup at T", fmtMicros(first), "", "the first statement naming the table at T reads its view (snapshot + window), as dbtrail query does"},
		{"sqlport: second lookup at T", fmtMicros(staging), "", "stages the table: its rows at the snapshot written once per snapshot into the port's cache as a DuckDB file with an index on the key (the base), the changes up to T laid over it (no rebuild at T)"},
		{"sqlport: first lookup at T on a second connection", fmtMicros(second), "", "another connection at T: attaches the base read-only (no rebuild, no load) and lays the changes up to T over it"},
		{"sqlport: full-table aggregate at T through the port", fmtMicros(pa), "", fmt.Sprintf("%s; median of %d", agg, sqlAggRounds)},
		{"sqlport: the same on dbtrail query's session", fmtMicros(qa), "", fmt.Sprintf("views session with the tail at T, as dbtrail query opens it; median of %d, interleaved", sqlAggRounds)},
		judged("sqlport: ratio aggregate port / dbtrail query", fmt.Sprintf("%.2f", aggRatio), "the port reads the table's base with the changes up to T laid over it, dbtrail query folds the window at every statement",
			measured(aggRatio, atMost(1.2, "%.1f"))),
		{"sqlport: one-shot aggregate at T2 through the port", fmtMicros(coldPort), "", "T2 = 10 s back, a new cut: a new connection, SET @@dbtrail_at, the aggregate (the base staged at T serves T2 too: the port lays T2's changes over it)"},
		{"sqlport: the same as a new dbtrail query session", fmtMicros(coldQuery), "", "open the views session with the tail at T2, the aggregate, close"},
		judged("sqlport: ratio one-shot aggregate port / dbtrail query", fmt.Sprintf("%.2f", coldRatio), "", measured(coldRatio, atMost(1.2, "%.1f"))),
	}, nil
}

// coldAggregate times agg as a one-shot question at at: through the port
// on a new connection (SET @@dbtrail_at, then agg), and on a new views
// session with the tail at at (dbtrail query's), checking both answer
// alike.
func coldAggregate(ctx context.Context, port *sql.DB, sess views.SessionOptions, past moment.Past, at, agg string) (time.Duration, time.Duration, error) {
	began := time.Now()
	c, err := port.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "SET @@dbtrail_at = '"+at+"'"); err != nil {
		return 0, 0, err
	}
	_, portRow, err := timeAggPort(ctx, c, agg)
	if err != nil {
		return 0, 0, err
	}
	portTime := time.Since(began)
	began = time.Now()
	r := tailpkg.Reader{Past: past, MemoryLimit: "512MB", At: mustAt(at)}
	sess.Tail = r.ViewsTail(nil)
	s, err := views.OpenSession(ctx, sess)
	if err != nil {
		return 0, 0, err
	}
	_, queryRow, err := timeAggQuery(ctx, s, agg)
	s.Close()
	if err != nil {
		return 0, 0, err
	}
	queryTime := time.Since(began)
	if portRow != queryRow {
		return 0, 0, fmt.Errorf("sqlport: the one-shot aggregate through the port is %q, on dbtrail query's session %q", portRow, queryRow)
	}
	return portTime, queryTime, nil
}

// startBenchPort serves the port over sess and r on a free loopback port
// with one user, and returns a pool of connections to it.
func startBenchPort(ctx context.Context, dir string, sess views.SessionOptions, r *tailpkg.Reader) (*sql.DB, func(), error) {
	tokens := filepath.Join(dir, "sql-tokens")
	if err := os.WriteFile(tokens, []byte("ro "+sqlSecret+" bench\n"), 0o600); err != nil {
		return nil, nil, err
	}
	p, err := sqlport.Listen(sqlport.Config{Addr: "127.0.0.1:0", TokenFile: tokens, Session: sess, Tail: r})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	db, err := sql.Open("mysql", fmt.Sprintf("bench:%s@tcp(%s)/?interpolateParams=true", sqlSecret, p.Addr()))
	if err != nil {
		cancel()
		<-done
		return nil, nil, err
	}
	return db, func() { db.Close(); cancel(); <-done }, nil
}

// sqlSourceTable creates bench_sqlsrc.t on the bench's MariaDB holding the
// table's n rows as its snapshot has them (refreshRow version 0), and
// returns a pool on that database.
func sqlSourceTable(ctx context.Context, env *refreshEnv, n int) (*sql.DB, error) {
	if err := env.idx.Exec(ctx, "DROP DATABASE IF EXISTS bench_sqlsrc", "CREATE DATABASE bench_sqlsrc"); err != nil {
		return nil, err
	}
	db, err := env.idx.DB(ctx, "bench_sqlsrc")
	if err != nil {
		return nil, err
	}
	stmts := []string{
		"CREATE TABLE t (id bigint NOT NULL, a varchar(40) DEFAULT NULL, b bigint DEFAULT NULL, c double DEFAULT NULL, PRIMARY KEY (id)) ENGINE=InnoDB",
		fmt.Sprintf("INSERT INTO t SELECT seq, CONCAT('name-', seq, '-', LPAD(LOWER(HEX((seq * 2654435761) & 0xffffffff)), 8, '0')), (seq %% 1000003) * 7, seq * 1.5 FROM seq_1_to_%d", n),
		"ANALYZE TABLE t",
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlport: source table: %s: %w", s[:min(len(s), 40)], err)
		}
	}
	return db, nil
}

// lookups times one lookup of each id on c (format holds the id's %d);
// with want, each row's a and b are checked against want(id).
func lookups(ctx context.Context, c *sql.Conn, format string, ids []int, want func(id int) (string, string)) ([]time.Duration, error) {
	out := make([]time.Duration, len(ids))
	for i, id := range ids {
		d, got, err := timeLookup(ctx, c, format, id)
		if err != nil {
			return nil, err
		}
		out[i] = d
		if want == nil {
			continue
		}
		if a, b := want(id); got[1].String != a || got[2].String != b {
			return nil, fmt.Errorf("lookup of id %d: got a=%q b=%q, want a=%q b=%q", id, got[1].String, got[2].String, a, b)
		}
	}
	return out, nil
}

// timeLookup times one lookup of id on c and returns its row.
func timeLookup(ctx context.Context, c *sql.Conn, format string, id int) (time.Duration, [4]sql.NullString, error) {
	var got [4]sql.NullString
	began := time.Now()
	if err := c.QueryRowContext(ctx, fmt.Sprintf(format, id)).Scan(&got[0], &got[1], &got[2], &got[3]); err != nil {
		return 0, got, fmt.Errorf("lookup of id %d: %w", id, err)
	}
	return time.Since(began), got, nil
}

// rowAtT is the bench table's row id after the first window of k changes
// of an n-row table (insertWindowAt's ids: every stride-th from 1, at
// version 1): its a and b.
func rowAtT(n, k int) func(id int) (string, string) {
	stride := max(n/k, 1)
	return func(id int) (string, string) {
		v := 0
		if (id-1)%stride == 0 && (id-1)/stride < k {
			v = 1
		}
		r := refreshRow(nil, id, v)
		return string(r[1].Text), string(r[2].Text)
	}
}

// timeAggPort times stmt on c and returns its row as text.
func timeAggPort(ctx context.Context, c *sql.Conn, stmt string) (time.Duration, string, error) {
	began := time.Now()
	rows, err := c.QueryContext(ctx, stmt)
	if err != nil {
		return 0, "", err
	}
	row, err := rowText(rows)
	return time.Since(began), row, err
}

// timeAggQuery times stmt on s (as dbtrail query runs it) and returns its
// row as text.
func timeAggQuery(ctx context.Context, s *views.Session, stmt string) (time.Duration, string, error) {
	began := time.Now()
	rows, _, err := s.Query(ctx, stmt)
	if err != nil {
		return 0, "", err
	}
	row, err := rowText(rows)
	return time.Since(began), row, err
}

// rowText reads the one row of rows, each value as fmt prints it (text
// as itself).
func rowText(rows *sql.Rows) (string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		return "", fmt.Errorf("no row: %v", rows.Err())
	}
	if err := rows.Scan(ptrs...); err != nil {
		return "", err
	}
	var out string
	for _, v := range vals {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		out += fmt.Sprint(v) + "|"
	}
	return out, rows.Close()
}

// median and percentile of ds (sorted in place).
func median(ds []time.Duration) time.Duration { return percentile(ds, 0.5) }

func percentile(ds []time.Duration, p float64) time.Duration {
	slices.Sort(ds)
	return ds[min(int(float64(len(ds))*p), len(ds)-1)]
}

func fmtMicros(d time.Duration) string {
	if d >= 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func mustAt(text string) when.At {
	a, err := when.Parse(text)
	if err != nil {
		panic(err)
	}
	return a
}

func containsWord(s, w string) bool { return strings.Contains(s, w) }
