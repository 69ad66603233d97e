package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// findDbtrail returns the dbtrail binary: path when set, otherwise the
// dbtrail next to this executable (bin/ after `make build`), otherwise the
// one on PATH.
func findDbtrail(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("--dbtrail %s: %w", path, err)
		}
		return p, nil
	}
	exe, err := os.Executable()
	if err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		next := filepath.Join(filepath.Dir(exe), "dbtrail")
		if fi, err := os.Stat(next); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return next, nil
		}
	}
	if p, err := exec.LookPath("dbtrail"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("dbtrail binary not found next to %s nor on PATH; run `make build` first, or pass --dbtrail", exe)
}

// childEnviron is the environment of the dbtrail processes: ours without
// any DBTRAIL_* setting except the log level and format, plus the two DSNs.
// The DSNs carry passwords, so they go here and never on a command line.
func childEnviron(env *testsuite.Env) []string {
	return append(filterEnviron(os.Environ()),
		"DBTRAIL_SOURCE_DSN="+env.SourceDSN(),
		"DBTRAIL_INDEX_DSN="+env.IndexDSN(),
	)
}

// filterEnviron drops the DBTRAIL_* variables of environ but
// DBTRAIL_LOG_LEVEL and DBTRAIL_LOG_FORMAT, so that a setting left in the
// user's shell (another DSN, a source name) cannot change the demo.
func filterEnviron(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DBTRAIL_") && name != "DBTRAIL_LOG_LEVEL" && name != "DBTRAIL_LOG_FORMAT" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// child is a running dbtrail process whose output is forwarded, line by
// line, to our stderr with the prefix "[dbtrail <command>] ".
type child struct {
	name string // "dbtrail dev", "dbtrail backup full"
	cmd  *exec.Cmd
	done chan struct{} // closed when Wait returned
	err  error         // Wait's result, valid after done
}

// childOptions are the less usual settings of a child.
type childOptions struct {
	// progress forwards a child that redraws a progress line with "\r":
	// "\r" ends a line too, and a line equal to the one before is dropped.
	progress bool
	// stdout and stderr, when set, also receive the child's standard
	// output and standard error.
	stdout, stderr io.Writer
}

// childName is "dbtrail" and the command words of args, up to the first flag.
func childName(args []string) string {
	name := "dbtrail"
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		name += " " + a
	}
	return name
}

// exitText describes how a child ended.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// startChild starts bin with args and environment env.
func startChild(bin string, env []string, args ...string) (*child, error) {
	return startChildWith(bin, env, childOptions{}, args...)
}

// startChildWith starts bin with args, environment env and options o.
func startChildWith(bin string, env []string, o childOptions, args ...string) (*child, error) {
	c := &child{name: childName(args), done: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = env
	out := &prefixWriter{prefix: "[" + c.name + "] ", w: os.Stderr, progress: o.progress}
	c.cmd.Stdout, c.cmd.Stderr = out, out
	if o.stdout != nil {
		c.cmd.Stdout = io.MultiWriter(out, o.stdout)
	}
	if o.stderr != nil {
		c.cmd.Stderr = io.MultiWriter(out, o.stderr)
	}
	c.cmd.WaitDelay = 5 * time.Second
	c.cmd.SysProcAttr = sysProcAttr()
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", c.name, bin, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		out.flush()
		close(c.done)
	}()
	return c, nil
}

// runChild runs bin with args to completion; ctx cancels it with SIGTERM.
func runChild(ctx context.Context, bin string, env []string, args ...string) error {
	c, err := startChild(bin, env, args...)
	if err != nil {
		return err
	}
	select {
	case <-c.done:
		if c.err != nil {
			return fmt.Errorf("%s failed: %w (its output is above)", c.name, c.err)
		}
		return nil
	case <-ctx.Done():
		_ = c.stop(10 * time.Second)
		return fmt.Errorf("%s: %w", c.name, ctx.Err())
	}
}

// output runs bin with args to completion and returns its stdout; stderr is
// forwarded like a child's.
func output(ctx context.Context, bin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout bytes.Buffer
	name := childName(args)
	errw := &prefixWriter{prefix: "[" + name + "] ", w: os.Stderr}
	cmd.Stdout, cmd.Stderr = &stdout, errw
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	errw.flush()
	if err != nil {
		return stdout.String(), fmt.Errorf("%s: %w", name, err)
	}
	return stdout.String(), nil
}

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits up to timeout for a clean exit, then kills
// the process. It returns an error unless the process exits with status 0
// (or had already ended).
func (c *child) stop(timeout time.Duration) error {
	if c.exited() {
		return nil
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !c.exited() {
		return fmt.Errorf("send SIGTERM to %s (pid %d): %w", c.name, c.cmd.Process.Pid, err)
	}
	select {
	case <-c.done:
		if c.err != nil {
			return fmt.Errorf("%s exited badly after SIGTERM: %w", c.name, c.err)
		}
		return nil
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s (pid %d) did not exit within %s of SIGTERM; killed", c.name, c.cmd.Process.Pid, timeout)
	}
}

// prefixWriter writes each complete line it is given to w with a prefix;
// flush writes a last, unterminated line. In progress mode "\r" ends a line
// too, trailing blanks are trimmed, and empty lines and a line equal to the
// one before are dropped: a progress bar redrawn every second becomes one
// line per change.
type prefixWriter struct {
	prefix   string
	w        io.Writer
	progress bool
	mu       sync.Mutex
	buf      []byte
	last     string // progress mode: the line written last
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if p.progress {
			if j := bytes.IndexByte(p.buf, '\r'); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		p.emit(p.buf[:i])
		p.buf = p.buf[i+1:]
	}
	if len(p.buf) > 64<<10 { // a very long line: pass it on in pieces
		p.emit(p.buf)
		p.buf = nil
	}
	return len(b), nil
}

func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		p.emit(p.buf)
		p.buf = nil
	}
}

// emit writes one line, given without its end.
func (p *prefixWriter) emit(line []byte) {
	s := string(line)
	if p.progress {
		s = strings.TrimRight(s, " \t")
		if s == "" || s == p.last {
			return
		}
		p.last = s
	}
	_, _ = io.WriteString(p.w, p.prefix+s+"\n")
}
