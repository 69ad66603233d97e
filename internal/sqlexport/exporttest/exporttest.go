// Package exporttest holds fixtures shared by the tests of sqlexport and
// verify: tables of every MariaDB type with edge values, a snapshot built from
// a live server without Temporal (SELECT → TableWriter.AppendSQL → Publish),
// chain pairs written into a copy of it as a refresh would (Chain), and
// loading a .sql file with the real mariadb client. Test code only.
package exporttest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/testsuite"
)

// Schema is the database the fixture tables live in; Schema2 holds one more
// table, so that an export spans two schemas.
const (
	Schema  = "fx"
	Schema2 = "fx2"
)

// Tables creates the fixture tables and rows on a source (see the
// statements), in a session with an empty sql_mode so that zero dates and the
// ENUM error value load as a lenient server would have stored them.
func Tables(ctx context.Context, t testing.TB, src *testsuite.Server) {
	t.Helper()
	stmts := []string{
		"SET SESSION sql_mode = ''; SET time_zone = '+00:00'; CREATE DATABASE " + Schema + "; CREATE DATABASE " + Schema2,
		"CREATE TABLE " + Schema + "." + allTypesDDL,
		"SET SESSION sql_mode = ''; SET time_zone = '+00:00'; INSERT INTO " + Schema + ".alltypes VALUES " + strings.Join(allTypesRows, ","),
		"CREATE TABLE " + Schema + ".nokey (a INT, b VARCHAR(10)) ENGINE=InnoDB",
		"INSERT INTO " + Schema + ".nokey VALUES (1,'x'),(1,'x'),(2,NULL),(NULL,NULL),(3,'')",
		"CREATE TABLE " + Schema + ".ckey (k VARCHAR(20) NOT NULL, n BIGINT UNSIGNED NOT NULL, v TEXT, PRIMARY KEY (k, n))",
		"INSERT INTO " + Schema + ".ckey VALUES ('a',1,'one'),('a',18446744073709551615,'max'),('b''q',0,'quote'),('😀',2,NULL)",
		"CREATE TABLE " + Schema + ".`odd name` (`col``tick` INT NOT NULL PRIMARY KEY, `sp ace` VARCHAR(5), `select` INT)",
		"INSERT INTO " + Schema + ".`odd name` VALUES (1,'a b',2),(0,'',NULL)",
		"CREATE TABLE " + Schema + ".empty (id INT PRIMARY KEY)",
		"CREATE TABLE " + Schema2 + ".other (id INT PRIMARY KEY, t DATETIME(3))",
		"SET SESSION sql_mode = ''; INSERT INTO " + Schema2 + ".other VALUES (1,'2026-11-29 06:15:00.125'),(2,'0000-00-00 00:00:00.000')",
	}
	if err := src.Exec(ctx, stmts...); err != nil {
		t.Fatal(err)
	}
}

// BuildSnapshot publishes a snapshot of every base table of schemas on db
// into <backupDir>/<source>, the way a full backup would but straight from
// SELECT: inside START TRANSACTION WITH CONSISTENT SNAPSHOT (so the manifest's
// position is the binlog position of what is read), FLOAT selected as
// CAST(col AS DOUBLE), TIMESTAMP in UTC, each table written with
// TableWriter.AppendSQL and its empty chain start. It returns the snapshot
// current names.
func BuildSnapshot(ctx context.Context, t testing.TB, db *sql.DB, backupDir, source string, schemas []string) *snapshot.Snapshot {
	t.Helper()
	cat, err := schema.LoadFromServer(ctx, db, schemas)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []string{"SET NAMES utf8mb4", "SET time_zone = '+00:00'", "SET SESSION sql_mode = ''",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	var pos binlogpos.Position
	var name, value string
	for _, v := range []string{"binlog_snapshot_file", "binlog_snapshot_position"} {
		if err := conn.QueryRowContext(ctx, "SHOW STATUS LIKE '"+v+"'").Scan(&name, &value); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if v == "binlog_snapshot_file" {
			pos.File = value
		} else if pos.Pos, err = strconv.ParseUint(value, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	srcDir := filepath.Join(backupDir, source)
	id, err := snapshot.NewSnapshotID(time.Now(), snapshot.ExistsIn(srcDir))
	if err != nil {
		t.Fatal(err)
	}
	b, err := snapshot.NewBuilder(srcDir, id)
	if err != nil {
		t.Fatal(err)
	}
	m := snapshot.Manifest{Source: source, Position: pos}
	for _, tbl := range cat.Tables() {
		var tn, create string
		if err := conn.QueryRowContext(ctx, "SHOW CREATE TABLE "+ident(tbl.Schema)+"."+ident(tbl.Name)).Scan(&tn, &create); err != nil {
			t.Fatal(err)
		}
		rel, err := snapshot.TableFile(tbl.Schema, tbl.Name)
		if err != nil {
			t.Fatal(err)
		}
		var res snapshot.WriteResult
		_, err = b.WriteFile(rel, func(w io.Writer) error {
			tw, err := snapshot.NewTableWriter(w, tbl, snapshot.FooterMeta{CreateTable: create, Position: pos, SnapshotID: id, Source: source}, snapshot.WriterOptions{})
			if err != nil {
				return err
			}
			if err := selectRows(ctx, conn, tbl, tw.AppendSQL); err != nil {
				return err
			}
			res, err = tw.Close()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		mt := snapshot.ManifestTable{Schema: tbl.Schema, Table: tbl.Name, File: rel, Rows: res.Rows,
			Fingerprint: res.Fingerprint, Kind: snapshot.KindFull}
		if !snapshot.FullOnly(tbl) { // as a full backup writes it
			if mt.Chain, err = snapshot.WriteEmptyChainStart(b, tbl); err != nil {
				t.Fatal(err)
			}
			mt.Kind = snapshot.KindDelta
		}
		m.Tables = append(m.Tables, mt)
	}
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.OpenCurrent(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// selectRows passes every row of tbl in the SQL text form to fn.
func selectRows(ctx context.Context, conn *sql.Conn, tbl *schema.Table, fn func([]rowimage.Cell) error) error {
	cols := make([]string, len(tbl.Columns))
	for i, c := range tbl.Columns {
		cols[i] = ident(c.Name)
		if c.Type == "float" {
			cols[i] = "CAST(" + cols[i] + " AS DOUBLE)"
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+strings.Join(cols, ",")+" FROM "+ident(tbl.Schema)+"."+ident(tbl.Name))
	if err != nil {
		return err
	}
	defer rows.Close()
	raw := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	row := make([]rowimage.Cell, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i := range raw {
			row[i] = rowimage.RawCell(raw[i])
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return rows.Err()
}

func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// LoadSQL loads file into srv with the real mariadb client, as a user would:
// the password in a mode-0600 option file (--defaults-extra-file), never on
// the command line. database, when not empty, is the client's default
// database. A client error fails the test with its output.
func LoadSQL(t testing.TB, srv *testsuite.Server, database, file string) {
	t.Helper()
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		if bin, err = exec.LookPath("/usr/bin/mariadb"); err != nil {
			t.Fatalf("the mariadb client is needed to load an export: %v", err)
		}
	}
	cnf := filepath.Join(t.TempDir(), "client.cnf")
	opt := fmt.Sprintf("[client]\nuser=%s\npassword=%s\ndefault-character-set=utf8mb4\n", srv.User, srv.Password)
	if err := os.WriteFile(cnf, []byte(opt), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	args := []string{"--defaults-extra-file=" + cnf, "-h", "127.0.0.1", "-P", strconv.Itoa(srv.Port), "--protocol=tcp"}
	if database != "" {
		args = append(args, database)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("mariadb < %s: %v\n%s", filepath.Base(file), err, out.String())
	}
	t.Logf("loaded %s with the mariadb client in %s", filepath.Base(file), time.Since(start).Round(time.Millisecond))
}

// CopySnapshot copies the folder of snap (real copies, not links) to
// <backupDir>/<source>/snapshots/<id> and opens the copy, so a test can
// damage files without touching snap.
func CopySnapshot(t testing.TB, snap *snapshot.Snapshot, backupDir, source string) *snapshot.Snapshot {
	t.Helper()
	dst := filepath.Join(backupDir, source, snapshot.SnapshotsDir, snap.Manifest.SnapshotID)
	err := filepath.WalkDir(snap.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(snap.Dir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := snapshot.OpenSnapshot(dst)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// Truncate cuts the table file of schema.table in snap by n bytes.
func Truncate(t testing.TB, snap *snapshot.Snapshot, schemaName, table string, n int64) {
	t.Helper()
	rel, _ := snapshot.TableFile(schemaName, table)
	TruncateFile(t, snap, rel, n)
}

// TruncateFile cuts the file rel (snapshot-relative) of snap by n bytes.
func TruncateFile(t testing.TB, snap *snapshot.Snapshot, rel string, n int64) {
	t.Helper()
	st, err := os.Stat(snap.Path(rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(snap.Path(rel), st.Size()-n); err != nil {
		t.Fatal(err)
	}
}

// Fixture starts a source holding the fixture tables and publishes a
// snapshot of them; db is a pool on the source (closed at test cleanup).
func Fixture(ctx context.Context, t testing.TB) (db *sql.DB, snap *snapshot.Snapshot) {
	t.Helper()
	src := testsuite.StartSource(t)
	Tables(ctx, t, src)
	db, err := src.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, BuildSnapshot(ctx, t, db, t.TempDir(), "main", []string{Schema})
}
