package capture

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	driver "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	dsnrule "github.com/dbtrail/dbtrail/internal/dsn"
)

// sourceConn is what capture needs to know and ask of the source server. It
// reads only server variables and binlog listings: nothing is installed or
// written on the source.
type sourceConn struct {
	db      *sql.DB
	cfg     *driver.Config
	host    string
	port    uint16
	flavor  string // mysql.MySQLFlavor or mysql.MariaDBFlavor
	version string
}

// openSource connects to the source described by dsn (go-sql-driver syntax)
// and detects its flavor from SELECT VERSION().
func openSource(ctx context.Context, dsn string) (*sourceConn, error) {
	cfg, err := dsnrule.Parse("source DSN", dsn)
	if err != nil {
		return nil, err
	}
	cfg.ParseTime = false
	cfg.Loc = time.UTC
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	host, portText, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("source address %q: want host:port: %w", cfg.Addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("source address %q: port: %w", cfg.Addr, err)
	}
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("source connector: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	s := &sourceConn{db: db, cfg: cfg, host: host, port: uint16(port)}
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&s.version); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to source %s: %w", cfg.Addr, err)
	}
	s.flavor = mysql.MySQLFlavor
	if strings.Contains(strings.ToLower(s.version), "mariadb") {
		s.flavor = mysql.MariaDBFlavor
	}
	return s, nil
}

func (s *sourceConn) Close() error { return s.db.Close() }

// variable returns a global server variable, "" when the server has none of
// that name.
func (s *sourceConn) variable(ctx context.Context, name string) (string, error) {
	var n, v string
	err := s.db.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE ?", name).Scan(&n, &v)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read source variable %s: %w", name, err)
	}
	return v, nil
}

// currentPosition returns the end of the source's newest binlog.
func (s *sourceConn) currentPosition(ctx context.Context) (binlogpos.Position, error) {
	rows, err := s.db.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return binlogpos.Position{}, err
	}
	if !rows.Next() {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS returned no row: binary logging is off on the source")
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return binlogpos.Position{}, err
	}
	pos, err := strconv.ParseUint(string(vals[1]), 10, 64)
	if err != nil {
		return binlogpos.Position{}, fmt.Errorf("SHOW MASTER STATUS position %q: %w", vals[1], err)
	}
	return binlogpos.Position{File: string(vals[0]), Pos: pos}, rows.Err()
}

// binaryLogs lists the binlog files the source still has, oldest first.
func (s *sourceConn) binaryLogs(ctx context.Context) ([]string, error) {
	files, err := binlogpos.Files(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("SHOW BINARY LOGS: %w", err)
	}
	return files, nil
}
