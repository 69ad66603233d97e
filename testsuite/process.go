package testsuite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// errPortInUse marks a start that failed because the port was taken.
var errPortInUse = errors.New("port already in use")

// process is one run of a server program (mariadbd, versitygw). done is
// closed once Wait returned.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's result, valid after done
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL if the process has not exited after
// timeout, and waits for it. A clean exit returns nil.
func (p *process) stop(timeout time.Duration) error {
	if p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !p.exited() {
		return fmt.Errorf("send SIGTERM to pid %d: %w", p.cmd.Process.Pid, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return p.err
	case <-timer.C:
		slog.Warn("testsuite: process ignored SIGTERM; killing", "program", p.cmd.Path, "pid", p.cmd.Process.Pid, "timeout", timeout)
		_ = p.kill()
		return fmt.Errorf("pid %d did not exit within %s of SIGTERM; killed", p.cmd.Process.Pid, timeout)
	}
}

// kill sends SIGKILL and waits for the process to exit.
func (p *process) kill() error {
	if p.exited() {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !p.exited() {
		return fmt.Errorf("send SIGKILL to pid %d: %w", p.cmd.Process.Pid, err)
	}
	<-p.done
	return nil
}

// args returns mariadbd's command line for s.
func (s *Server) args() []string {
	args := []string{
		"--no-defaults", // must come first
		"--datadir=" + s.Dir,
		"--socket=" + s.Socket,
		"--pid-file=" + filepath.Join(s.Dir, "mariadbd.pid"),
		"--tmpdir=" + s.tmpDir(),
		"--log-error=" + s.ErrorLog(),
		"--init-file=" + s.initFile(),
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(s.Port),
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_unicode_ci",
		"--default-time-zone=+00:00",
		"--innodb-flush-log-at-trx-commit=2",
		"--sync-binlog=0",
		"--innodb-buffer-pool-size=256M",
		"--innodb-log-file-size=256M",
		"--skip-name-resolve",
		"--max-allowed-packet=256M",
		"--max-connections=500",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root") // mariadbd refuses to run as root otherwise
	}
	id := s.opts.ServerID
	switch s.Role {
	case RoleSource:
		if id == 0 {
			id = 1
		}
		args = append(args,
			"--log-bin="+filepath.Join(s.Dir, "binlog"),
			"--binlog-format=ROW",
			"--binlog-row-image=FULL",
			"--binlog-row-metadata=FULL",
			"--server-id="+strconv.FormatUint(uint64(id), 10),
			"--log-slave-updates=OFF",
			"--binlog-checksum=CRC32",
		)
	case RoleIndex:
		if id == 0 {
			id = 2
		}
		args = append(args, "--server-id="+strconv.FormatUint(uint64(id), 10))
	}
	return append(args, s.opts.ExtraArgs...)
}

func (s *Server) initFile() string {
	return filepath.Join(s.Dir, "dbtrail-init.sql")
}

// writeInitFile writes the SQL that mariadbd runs at each start to
// (re)create the dbtrail user. MariaDB reads one statement per line.
func (s *Server) writeInitFile() error {
	pw := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s.Password)
	var b strings.Builder
	b.WriteString("SET SESSION sql_log_bin=0;\n")
	for _, host := range []string{"127.0.0.1", "localhost"} {
		acct := fmt.Sprintf("'%s'@'%s'", s.User, host)
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS %s IDENTIFIED BY '%s';\n", acct, pw)
		fmt.Fprintf(&b, "ALTER USER %s IDENTIFIED BY '%s';\n", acct, pw)
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON *.* TO %s WITH GRANT OPTION;\n", acct)
	}
	return os.WriteFile(s.initFile(), []byte(b.String()), 0o600)
}

// launch starts mariadbd on s.Dir and s.Port and waits until the dbtrail
// user can log in. The caller holds s.mu or owns s exclusively. On failure
// the process is killed and the error holds the error log's tail.
func (s *Server) launch(ctx context.Context) error {
	start := time.Now()
	if err := os.MkdirAll(s.tmpDir(), 0o700); err != nil {
		return fmt.Errorf("start mariadb on port %d: %w", s.Port, err)
	}
	if err := s.writeInitFile(); err != nil {
		return fmt.Errorf("start mariadb on port %d: %w", s.Port, err)
	}
	bin, err := findBinary("mariadbd")
	if err != nil {
		return fmt.Errorf("start mariadb on port %d: %w", s.Port, err)
	}
	logFile, err := os.OpenFile(s.ErrorLog(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start mariadb on port %d: %w", s.Port, err)
	}
	logOffset, _ := logFile.Seek(0, io.SeekEnd)
	cmd := exec.Command(bin, s.args()...) // not CommandContext: ctx bounds the start only
	cmd.Stdout = logFile                  // errors printed before --log-error takes over
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	_ = logFile.Close()
	if err != nil {
		return fmt.Errorf("start mariadb on port %d: %w", s.Port, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()

	if err := s.waitReady(ctx, p); err != nil {
		_ = p.kill()
		logTail := s.logTail(logOffset)
		err = fmt.Errorf("start mariadb on port %d: %w; error log %s tail:\n%s", s.Port, err, s.ErrorLog(), logTail)
		if strings.Contains(logTail, "Address already in use") {
			err = fmt.Errorf("%w (%w)", err, errPortInUse)
		}
		return err
	}
	s.proc = p
	slog.Debug("testsuite: mariadb started", "role", s.Role, "port", s.Port, "pid", cmd.Process.Pid,
		"dir", s.Dir, "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// waitReady polls until the dbtrail user can log in over TCP, the process
// exits, readyTimeout passes or ctx is done.
func (s *Server) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	connector, err := mysql.NewConnector(s.driverConfig())
	if err != nil {
		return err
	}
	probe := sql.OpenDB(connector)
	defer probe.Close()
	probe.SetMaxIdleConns(0)
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("mariadbd exited during start: %v", p.err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		last = probe.PingContext(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (last error: %v)", ctx.Err(), last)
		case <-p.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail returns the last lines the error log got after offset.
func (s *Server) logTail(offset int64) string {
	f, err := os.Open(s.ErrorLog())
	if err != nil {
		return "(no error log: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > 16<<10 {
		offset = fi.Size() - 16<<10
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "(error log: " + err.Error() + ")"
	}
	b, _ := io.ReadAll(f)
	return tail(b, 30)
}

// tmpDir is the server's own temporary folder, beside its datadir (not in
// it, where it would be a database): internal temporary tables and sort
// files never share /tmp with other processes, which may clean it.
func (s *Server) tmpDir() string { return s.Dir + ".tmp" }
