package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
)

// TestSQLPortWire compares what the SQL port tells on the wire with what
// the source server tells, through go-mysql's client (which shows the
// fields as sent), over the every-type table of a real backup with its
// live tail:
//   - each column's character set number (collation id), with the
//     handshake's collation, after SET NAMES utf8mb3, SET NAMES … COLLATE,
//     and with character_set_results NULL (each column's own collation,
//     the latin1 column's text in latin1, byte for byte);
//   - a prepared statement's parameters and columns at COM_STMT_PREPARE;
//   - SET time_zone = '+02:00': NOW(), CURDATE(), CURTIME() at a moment
//     are the moment's commit time there, as the source answers them at
//     that time (SET timestamp), TIMESTAMP columns are shown there as the
//     source shows them, and SET @@dbtrail_at takes a time there.
func TestSQLPortWire(t *testing.T) {
	e := newBackupEnv(t)
	create, allRows := exporttest.AllTypesTable()
	e.execAll(t, "SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'", create,
		"INSERT INTO alltypes VALUES "+strings.Join(allRows, ","))
	e.fullBackup(t)
	// The moment's transaction commits at a time the session sets, after
	// the snapshot; the port is asked once that time has passed.
	commit := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	conn, err := e.src.Conn(e.ctx)
	must(t, err)
	for _, q := range []string{fmt.Sprintf("SET timestamp = %d", commit.Unix()), "UPDATE alltypes SET vc = 'then' WHERE id = 1"} {
		_, err = conn.ExecContext(e.ctx, q)
		must(t, err)
	}
	var gtidThen string
	must(t, conn.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&gtidThen))
	must(t, conn.Close())
	e.waitCaughtUp(t)
	time.Sleep(time.Until(commit.Add(1100 * time.Millisecond)))
	addr := startSQLPort(t, e)

	cfg, err := gomysql.ParseDSN(e.source.DSN("app"))
	must(t, err)
	connect := func(addr, user, pass string) *client.Conn {
		t.Helper()
		c, err := client.Connect(addr, user, pass, "app", func(c *client.Conn) error { return c.SetCollation("utf8mb4_general_ci") })
		must(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	src, port := connect(cfg.Addr, cfg.User, cfg.Passwd), connect(addr, "viewer", portSecret)
	both := func(q string) {
		t.Helper()
		for _, c := range []*client.Conn{src, port} {
			_, err := c.Execute(q)
			must(t, err)
		}
	}
	const all = "SELECT * FROM app.alltypes ORDER BY id"
	charsets := func(c *client.Conn) (string, [][]byte) {
		t.Helper()
		res, err := c.Execute(all)
		must(t, err)
		var out []string
		lat := -1
		for i, f := range res.Fields {
			out = append(out, fmt.Sprintf("%s:%d", f.Name, f.Charset))
			if string(f.Name) == "lat" {
				lat = i
			}
		}
		var texts [][]byte
		for r := range res.Values {
			b, err := res.GetString(r, lat)
			must(t, err)
			texts = append(texts, []byte(b))
		}
		return strings.Join(out, " "), texts
	}
	for _, set := range []string{"", "SET NAMES utf8mb3", "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", "SET character_set_results = NULL"} {
		if set != "" {
			both(set)
		}
		want, wantLat := charsets(src)
		got, gotLat := charsets(port)
		if got != want {
			t.Errorf("%q: the port's charsets\n%s\nthe source's\n%s", set, got, want)
		}
		if fmt.Sprintf("%q", gotLat) != fmt.Sprintf("%q", wantLat) {
			t.Errorf("%q: the latin1 column through the port %q, the source's %q", set, gotLat, wantLat)
		}
	}
	both("SET NAMES utf8mb4")

	// COM_STMT_PREPARE tells the parameters and the columns.
	prepared := func(c *client.Conn) string {
		t.Helper()
		st, err := c.Prepare("SELECT * FROM app.alltypes WHERE id >= ? AND vc <> ?")
		must(t, err)
		defer st.Close()
		fields, err := st.GetColumnFields()
		must(t, err)
		out := []string{fmt.Sprintf("%d params %d columns", st.ParamNum(), st.ColumnNum())}
		for _, f := range fields {
			out = append(out, fmt.Sprintf("%s:%d:%d:unsigned=%t", f.Name, f.Type, f.Charset, f.Flag&mysql.UNSIGNED_FLAG != 0))
		}
		return strings.Join(out, " ")
	}
	if got, want := prepared(port), prepared(src); got != want {
		t.Errorf("COM_STMT_PREPARE through the port\n%s\nthe source's\n%s", got, want)
	}

	// The session's time zone.
	both("SET time_zone = '+02:00'")
	_, err = src.Execute(fmt.Sprintf("SET timestamp = %d", commit.Unix()))
	must(t, err)
	plus2 := commit.In(time.FixedZone("+02:00", 2*3600))
	local := plus2.Format(time.DateTime)
	_, err = port.Execute("SET @@dbtrail_at = '" + local + "'")
	must(t, err)
	row := func(c *client.Conn, q string) string {
		t.Helper()
		res, err := c.Execute(q)
		must(t, err)
		var out []string
		for r := range res.Values {
			for i := range res.Fields {
				s, err := res.GetString(r, i)
				must(t, err)
				out = append(out, s)
			}
		}
		return strings.Join(out, "|")
	}
	if cut := row(port, "SELECT @@dbtrail_cut"); !strings.Contains(cut, gtidThen) {
		t.Errorf("SET @@dbtrail_at = '%s' at +02:00: %s; want the cut at %s (committed %s UTC)", local, cut, gtidThen, commit)
	}
	const clock = "SELECT NOW(), CURDATE(), CURTIME(), UTC_TIMESTAMP(), CURRENT_TIME, @@time_zone"
	if got, want := row(port, clock), row(src, clock); got != want || !strings.HasPrefix(got, local+"|"+plus2.Format(time.DateOnly)+"|"+plus2.Format(time.TimeOnly)+"|") {
		t.Errorf("%s at +02:00 through the port %q, the source %q", clock, got, want)
	}
	const stamps = "SELECT id, ts, ts0 FROM app.alltypes ORDER BY id"
	if got, want := row(port, stamps), row(src, stamps); got != want {
		t.Errorf("TIMESTAMP columns at +02:00 through the port\n%s\nthe source's\n%s", got, want)
	}
	// A TIMESTAMP compared with a string literal compares in the session's
	// zone: the same rows as the source's.
	first := row(src, "SELECT ts FROM app.alltypes WHERE ts > '1971-01-01' ORDER BY id LIMIT 1")
	if first == "" {
		t.Fatal("the every-type table has no TIMESTAMP after 1971 to compare with")
	}
	for _, q := range []string{
		"SELECT id, ts FROM app.alltypes WHERE ts > '1971-01-01' ORDER BY id",
		"SELECT id FROM app.alltypes WHERE ts = '" + first + "' ORDER BY id",
		"SELECT id FROM app.alltypes WHERE ts BETWEEN '1971-01-01' AND '" + first + "' ORDER BY id",
		"SELECT id FROM app.alltypes WHERE ts < '" + first + "' OR ts IN ('" + first + "') ORDER BY id",
	} {
		if got, want := row(port, q), row(src, q); got != want {
			t.Errorf("%s at +02:00 through the port %q, the source %q", q, got, want)
		}
	}
	both("SET time_zone = '+00:00'")
	if got, want := row(port, stamps), row(src, stamps); got != want {
		t.Errorf("TIMESTAMP columns at +00:00 through the port\n%s\nthe source's\n%s", got, want)
	}
}
