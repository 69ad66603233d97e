package verify

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// LivePosition is the binlog position of the consistent snapshot a live
// fingerprint was computed in.
type LivePosition struct {
	binlogpos.Position
	// Reported is false when the server does not report the binlog position
	// of a consistent snapshot (status binlog_snapshot_file: MariaDB and
	// Percona Server have it, MySQL does not). With Reported true, an empty
	// File means the server writes no binlog.
	Reported bool `json:"reported"`
}

func (p LivePosition) String() string {
	switch {
	case !p.Reported:
		return "unknown"
	case p.File == "":
		return "none (binlog off)"
	}
	return p.File + ":" + strconv.FormatUint(p.Pos, 10)
}

// ShapeError reports a live table whose columns are not the snapshot's
// (names in order, compared case-insensitively), or that does not exist.
type ShapeError struct {
	Table      string   // schema.table
	Live, Snap []string // column names; Live is empty when the table is missing
}

func (e *ShapeError) Error() string {
	if len(e.Live) == 0 {
		return fmt.Sprintf("table %s does not exist on the live server", e.Table)
	}
	return fmt.Sprintf("table %s: live columns (%s) are not the snapshot's (%s)", e.Table, strings.Join(e.Live, ", "), strings.Join(e.Snap, ", "))
}

// LiveFingerprint computes the fingerprint of table t on a live server with
// the same function the snapshot writer uses (see SnapshotFingerprint), and
// the binlog position it is valid at. It takes one connection of db, sets
// NAMES utf8mb4, time_zone '+00:00', an empty sql_mode (no
// PAD_CHAR_TO_FULL_LENGTH) and REPEATABLE READ on it, runs START TRANSACTION
// WITH CONSISTENT SNAPSHOT, READ ONLY, reads the snapshot's binlog position
// (SHOW STATUS LIKE 'binlog_snapshot_%'), checks that the live table has t's
// columns in t's order (information_schema, hidden columns included), and
// SELECTs every column in table order (FLOAT as CAST(col AS DOUBLE), which
// prints the stored float32 exactly). The connection is discarded afterwards,
// never returned to the pool with those settings.
//
// db must be a go-sql-driver/mysql pool with parseTime=false (the default).
// A live table of another shape is a *ShapeError, returned with the position.
// Value errors name the table, the row (in SELECT order) and the column.
func LiveFingerprint(ctx context.Context, db *sql.DB, t *schema.Table) (snapshot.Fingerprint, LivePosition, error) {
	h := newHasher(t, nil, true)
	pos, err := liveScan(ctx, db, t, h, Where{})
	return h.fp, pos, err
}

// Where restricts a scan to the rows a condition holds for: SQL is a
// boolean expression over the table's columns with ? for Args.
type Where struct {
	SQL  string
	Args []any
}

// LiveFingerprintWhere is LiveFingerprint of the rows w holds for:
// fingerprints of conditions that split the table's rows between them
// (each row in exactly one) add up (snapshot.Fingerprint.Merge) to the
// table's.
func LiveFingerprintWhere(ctx context.Context, db *sql.DB, t *schema.Table, w Where) (snapshot.Fingerprint, error) {
	h := newHasher(t, nil, true)
	_, err := liveScan(ctx, db, t, h, w)
	return h.fp, err
}

func liveScan(ctx context.Context, db *sql.DB, t *schema.Table, h *hasher, w Where) (LivePosition, error) {
	conn, pos, release, err := ConsistentSnapshot(ctx, db)
	if err != nil {
		return LivePosition{}, fmt.Errorf("table %s: %w", t.QualifiedName(), err)
	}
	defer release()
	if err := CheckColumns(ctx, conn, t); err != nil {
		return pos, err
	}
	q := selectSQL(t)
	if w.SQL != "" {
		q += " WHERE " + w.SQL
	}
	rows, err := conn.QueryContext(ctx, q, w.Args...)
	if err != nil {
		return pos, fmt.Errorf("table %s: select: %w", t.QualifiedName(), err)
	}
	defer rows.Close()
	raw := make([]sql.RawBytes, len(t.Columns))
	ptrs := make([]any, len(raw))
	row := make([]rowimage.Cell, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return pos, fmt.Errorf("table %s row %d: %w", t.QualifiedName(), h.rows+1, err)
		}
		for i, v := range raw {
			row[i] = rowimage.RawCell(v)
		}
		if err := h.add(row); err != nil {
			return pos, fmt.Errorf("live %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return pos, fmt.Errorf("table %s: select after row %d: %w", t.QualifiedName(), h.rows, err)
	}
	return pos, nil
}

// ConsistentSnapshot takes one connection of db and starts on it the read
// LiveFingerprint computes in: NAMES utf8mb4, time_zone '+00:00', an empty
// sql_mode, REPEATABLE READ, START TRANSACTION WITH CONSISTENT SNAPSHOT,
// READ ONLY. It returns the connection, the snapshot's binlog position and
// release, which discards the connection (it is never returned to the pool
// with those settings). On error the connection is already released.
func ConsistentSnapshot(ctx context.Context, db *sql.DB) (conn *sql.Conn, pos LivePosition, release func(), err error) {
	conn, err = db.Conn(ctx)
	if err != nil {
		return nil, LivePosition{}, nil, fmt.Errorf("open a connection: %w", err)
	}
	release = func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // discard, do not pool
		conn.Close()
	}
	for _, stmt := range []string{
		"SET NAMES utf8mb4",
		"SET time_zone = '+00:00'",
		"SET SESSION sql_mode = ''",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			release()
			return nil, LivePosition{}, nil, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	if pos, err = snapshotPosition(ctx, conn); err != nil {
		release()
		return nil, LivePosition{}, nil, err
	}
	return conn, pos, release, nil
}

// snapshotPosition reads binlog_snapshot_file and binlog_snapshot_position.
func snapshotPosition(ctx context.Context, conn *sql.Conn) (LivePosition, error) {
	rows, err := conn.QueryContext(ctx, "SHOW STATUS LIKE 'binlog_snapshot_%'")
	if err != nil {
		return LivePosition{}, fmt.Errorf("read the consistent snapshot's binlog position: %w", err)
	}
	defer rows.Close()
	var p LivePosition
	var file, pos bool
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return LivePosition{}, err
		}
		switch strings.ToLower(name) {
		case "binlog_snapshot_file":
			p.File, file = value, true
		case "binlog_snapshot_position":
			if p.Pos, err = strconv.ParseUint(value, 10, 64); err != nil {
				return LivePosition{}, fmt.Errorf("binlog_snapshot_position %q: %w", value, err)
			}
			pos = true
		}
	}
	if err := rows.Err(); err != nil {
		return LivePosition{}, err
	}
	p.Reported = file && pos
	if !p.Reported {
		return LivePosition{}, nil
	}
	return p, nil
}

// CheckColumns compares the live table's column names with t's
// (information_schema, hidden columns included, case-insensitively): other
// names or another order is a *ShapeError, a missing table too.
func CheckColumns(ctx context.Context, conn *sql.Conn, t *schema.Table) error {
	rows, err := conn.QueryContext(ctx, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", t.Schema, t.Name)
	if err != nil {
		return fmt.Errorf("table %s: read its columns: %w", t.QualifiedName(), err)
	}
	defer rows.Close()
	var live []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("table %s: read its columns: %w", t.QualifiedName(), err)
		}
		if !t.IsDerived(n) { // generated: not stored, not compared
			live = append(live, n)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("table %s: read its columns: %w", t.QualifiedName(), err)
	}
	same := len(live) == len(t.Columns)
	for i := 0; same && i < len(live); i++ {
		same = strings.EqualFold(live[i], t.Columns[i].Name)
	}
	if !same {
		return &ShapeError{Table: t.QualifiedName(), Live: live, Snap: t.ColumnNames()}
	}
	return nil
}

// selectSQL selects every column of t in table order, FLOAT as DOUBLE.
func selectSQL(t *schema.Table) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		if c.Type == "float" {
			b.WriteString("CAST(" + quoteIdent(c.Name) + " AS DOUBLE)")
		} else {
			b.WriteString(quoteIdent(c.Name))
		}
	}
	b.WriteString(" FROM " + quoteIdent(t.Schema) + "." + quoteIdent(t.Name))
	return b.String()
}

func quoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
