// Package testsuite starts real, throwaway MariaDB servers for dbtrail's
// tests and demo: a binlog source and an index server, each a mariadbd
// process bound to 127.0.0.1 on its own port, with its own datadir, socket,
// pid file and error log.
//
// Contracts:
//   - Start never touches a system server: it runs mariadbd --no-defaults on
//     a datadir copied from a per-user template built by mariadb-install-db.
//   - The harness only stops processes it started (it keeps their
//     *exec.Cmd), and on Linux each mariadbd gets SIGKILL when the Go process
//     dies, so no server outlives a crashed test.
//   - Every server has a user "dbtrail" (@127.0.0.1 and @localhost) with a
//     random password and ALL PRIVILEGES WITH GRANT OPTION, replication
//     privileges included; it is (re)created at each start from an init file
//     with sql_log_bin=0, so it never shows up in the source's binlog.
//
// Install makes sure the programs exist; testing.go has the testing.TB
// helpers (StartSource, StartIndex, ...). s3.go starts an S3 server
// (versitygw) the same way; s3_testing.go has StartS3.
package testsuite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Role says what a server is for; it decides its binlog settings.
type Role string

const (
	// RoleSource is a server whose binlog dbtrail captures: log_bin=ON with
	// binlog_format=ROW, binlog_row_image=FULL, binlog_row_metadata=FULL,
	// CRC32 checksums and server_id 1 unless Options.ServerID says otherwise.
	RoleSource Role = "source"
	// RoleIndex is the server that holds dbtrail's index: no binlog,
	// server_id 2 unless Options.ServerID says otherwise.
	RoleIndex Role = "index"
)

// DefaultUser is the account the harness creates on every server.
const DefaultUser = "dbtrail"

const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 60 * time.Second
	maxSocketLen = 100 // sun_path holds 108 bytes
)

// Options configures Start.
type Options struct {
	// Role is RoleSource or RoleIndex; anything else is an error.
	Role Role
	// Dir is the parent folder of a new throwaway datadir; "" means
	// os.TempDir(). Ignored when DataDir is set.
	Dir string
	// DataDir, when set, is the exact datadir to use: re-used as it is when
	// it already holds a MariaDB datadir, initialised from the template when
	// it is missing or empty. Used by the restartable demo.
	DataDir string
	// Keep leaves the datadir in place on Stop (as DBTRAIL_KEEP_DATADIR=1
	// does for every server).
	Keep bool
	// Port is the TCP port on 127.0.0.1; 0 picks a free one (and retries
	// with another if it is taken before mariadbd binds it).
	Port int
	// ServerID is @@server_id; 0 means 1 for a source and 2 for an index.
	ServerID uint32
	// Password is the dbtrail user's password; "" means a random one. It
	// must not contain a newline.
	Password string
	// ExtraArgs are appended last to mariadbd's command line, so they
	// override the harness defaults (e.g. "--binlog-format=STATEMENT").
	ExtraArgs []string
}

// Server is one running (or stopped) mariadbd started by Start. Its
// exported fields are set by Start and must not be changed. Methods are
// safe for concurrent use.
type Server struct {
	Role     Role
	Port     int    // TCP port on 127.0.0.1
	Dir      string // datadir; error.log, the pid file and the init file live in it
	Socket   string // unix socket path
	User     string // DefaultUser
	Password string

	opts    Options
	keep    bool
	sockDir string // short folder holding Socket when Dir is too long; removed on Stop

	mu      sync.Mutex
	proc    *process // nil when not running
	pool    *sql.DB  // lazily opened for Exec; closed by Stop
	stopped bool
}

// Start creates (or, with Options.DataDir, re-uses) a datadir, starts
// mariadbd on it and waits until the dbtrail user can log in. On failure
// nothing is left running and a datadir Start created is removed; the
// error carries the tail of the server's error log. ctx bounds the start
// only, not the server's life: call Stop.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Role != RoleSource && opts.Role != RoleIndex {
		return nil, fmt.Errorf("start mariadb: unknown role %q", opts.Role)
	}
	if strings.ContainsAny(opts.Password, "\r\n") {
		return nil, errors.New("start mariadb: password contains a newline")
	}
	tpl, err := ensureTemplate(ctx)
	if err != nil {
		return nil, fmt.Errorf("start mariadb %s: %w", opts.Role, err)
	}
	s := &Server{
		Role:     opts.Role,
		Port:     opts.Port,
		User:     DefaultUser,
		Password: opts.Password,
		opts:     opts,
		keep:     opts.Keep || keepDataDirs(),
	}
	if s.Password == "" {
		if s.Password, err = randomPassword(); err != nil {
			return nil, fmt.Errorf("start mariadb %s: %w", opts.Role, err)
		}
	}
	created, err := s.prepareDir(tpl)
	if err != nil {
		return nil, fmt.Errorf("start mariadb %s: %w", opts.Role, err)
	}
	fail := func(err error) (*Server, error) {
		s.removeSockDir()
		if created && !s.keep {
			_ = os.RemoveAll(s.Dir)
			_ = os.RemoveAll(s.tmpDir())
		}
		return nil, err
	}
	if err := s.setSocket(); err != nil {
		return fail(fmt.Errorf("start mariadb %s: %w", opts.Role, err))
	}
	for attempt := 1; ; attempt++ {
		if opts.Port == 0 {
			if s.Port, err = freePort(); err != nil {
				return fail(fmt.Errorf("start mariadb %s: %w", opts.Role, err))
			}
		}
		err = s.launch(ctx)
		if err == nil {
			return s, nil
		}
		if opts.Port != 0 || attempt == 3 || !errors.Is(err, errPortInUse) {
			return fail(err)
		}
		slog.Debug("testsuite: port taken, retrying", "port", s.Port)
	}
}

// prepareDir sets s.Dir and fills it from the template when needed. It
// reports whether it created the folder.
func (s *Server) prepareDir(tpl string) (created bool, err error) {
	if s.opts.DataDir == "" {
		if s.opts.Dir != "" {
			if err := os.MkdirAll(s.opts.Dir, 0o700); err != nil {
				return false, err
			}
		}
		if s.Dir, err = os.MkdirTemp(s.opts.Dir, "mariadb-"+string(s.opts.Role)+"-"); err != nil {
			return false, err
		}
		if err := copyDir(tpl, s.Dir); err != nil {
			_ = os.RemoveAll(s.Dir)
			return false, fmt.Errorf("copy template datadir: %w", err)
		}
		return true, nil
	}
	if s.Dir, err = filepath.Abs(s.opts.DataDir); err != nil {
		return false, err
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "mysql")); err == nil {
		return false, nil // an existing datadir: re-use it
	}
	entries, err := os.ReadDir(s.Dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		created = true
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return false, err
		}
	case err != nil:
		return false, err
	case len(entries) > 0:
		return false, fmt.Errorf("%s is neither empty nor a MariaDB datadir", s.Dir)
	}
	if err := copyDir(tpl, s.Dir); err != nil {
		return created, fmt.Errorf("copy template datadir: %w", err)
	}
	return created, nil
}

// setSocket puts the socket in the datadir, or in a short temporary folder
// when that path would not fit in a sockaddr_un.
func (s *Server) setSocket() error {
	s.Socket = filepath.Join(s.Dir, "mariadbd.sock")
	if len(s.Socket) <= maxSocketLen {
		return nil
	}
	dir, err := os.MkdirTemp("", "dbtrail-sock-")
	if err != nil {
		return err
	}
	s.sockDir = dir
	s.Socket = filepath.Join(dir, "mariadbd.sock")
	return nil
}

func (s *Server) removeSockDir() {
	if s.sockDir != "" {
		_ = os.RemoveAll(s.sockDir)
	}
}

// Addr returns "127.0.0.1:<port>".
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
}

// ErrorLog returns the path of the server's error log.
func (s *Server) ErrorLog() string {
	return filepath.Join(s.Dir, "error.log")
}

// DSN returns a go-sql-driver/mysql DSN for the dbtrail user over TCP, with
// charset=utf8mb4, parseTime=false, multiStatements=true and
// interpolateParams=true. db may be "" for no default database.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("%s:%s@tcp(%s)/%s?charset=utf8mb4&parseTime=false&multiStatements=true&interpolateParams=true",
		s.User, s.Password, s.Addr(), db)
}

// DB opens a new pool on DSN(db) and pings it. The caller closes it.
func (s *Server) DB(ctx context.Context, db string) (*sql.DB, error) {
	pool, err := sql.Open("mysql", s.DSN(db))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.Addr(), err)
	}
	if err := pool.PingContext(ctx); err != nil {
		_ = pool.Close()
		return nil, fmt.Errorf("connect to mariadb on port %d: %w", s.Port, err)
	}
	return pool, nil
}

// Exec runs each statement in order as the dbtrail user on a pool owned by
// the Server (no default database; a statement may hold several separated
// by ';'). Session state such as USE does not carry over between
// statements. It stops at the first error.
func (s *Server) Exec(ctx context.Context, stmts ...string) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return fmt.Errorf("exec on mariadb port %d: server stopped", s.Port)
	}
	if s.pool == nil {
		pool, err := sql.Open("mysql", s.DSN(""))
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("open %s: %w", s.Addr(), err)
		}
		s.pool = pool
	}
	pool := s.pool
	s.mu.Unlock()
	for _, stmt := range stmts {
		if _, err := pool.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("exec %q on mariadb port %d: %w", abbreviate(stmt, 200), s.Port, err)
		}
	}
	return nil
}

// Stop shuts the server down gracefully (SIGTERM, then SIGKILL after a
// minute), waits for it to exit, and removes the datadir unless
// Options.Keep or DBTRAIL_KEEP_DATADIR=1. It also works after Kill, and a
// second call does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	var errs []error
	if s.pool != nil {
		_ = s.pool.Close()
		s.pool = nil
	}
	if s.proc != nil {
		if err := s.proc.stop(stopTimeout); err != nil {
			errs = append(errs, fmt.Errorf("stop mariadb on port %d: %w", s.Port, err))
		}
		s.proc = nil
	}
	s.removeSockDir()
	if s.keep {
		if !s.opts.Keep {
			slog.Info("testsuite: datadir kept (DBTRAIL_KEEP_DATADIR=1)", "role", s.Role, "dir", s.Dir)
		}
	} else if err := errors.Join(os.RemoveAll(s.Dir), os.RemoveAll(s.tmpDir())); err != nil {
		errs = append(errs, fmt.Errorf("remove datadir of mariadb on port %d: %w", s.Port, err))
	}
	return errors.Join(errs...)
}

// Kill sends SIGKILL to the server, as a crash would, and waits for it to
// exit. The datadir stays; Restart brings the server back on it.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return fmt.Errorf("kill mariadb on port %d: not running", s.Port)
	}
	err := s.proc.kill()
	s.proc = nil
	if err != nil {
		return fmt.Errorf("kill mariadb on port %d: %w", s.Port, err)
	}
	return nil
}

// Restart starts the server again on the same datadir, port and password,
// after a graceful stop if it is still running (use Kill first to simulate
// a crash). It fails after Stop.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("restart mariadb on port %d: server stopped", s.Port)
	}
	if s.proc != nil {
		if err := s.proc.stop(stopTimeout); err != nil {
			return fmt.Errorf("restart mariadb on port %d: %w", s.Port, err)
		}
		s.proc = nil
	}
	return s.launch(ctx)
}

// keepDataDirs reports whether DBTRAIL_KEEP_DATADIR=1 asks to keep every
// datadir for inspection.
func keepDataDirs() bool {
	return os.Getenv("DBTRAIL_KEEP_DATADIR") == "1"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// driverConfig is the configuration used for the readiness probe.
func (s *Server) driverConfig() *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = s.User
	cfg.Passwd = s.Password
	cfg.Net = "tcp"
	cfg.Addr = s.Addr()
	cfg.Timeout = 2 * time.Second
	return cfg
}
