package capture_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/testsuite"
)

// dbtrailBin is the dbtrail binary built once for the process tests.
var dbtrailBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dbtrail-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dbtrailBin = filepath.Join(dir, "dbtrail")
	build := exec.Command("go", "build", "-o", dbtrailBin, "github.com/dbtrail/dbtrail/cmd/dbtrail")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build dbtrail:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one source and one index server with the index initialised.
type env struct {
	t      *testing.T
	ctx    context.Context
	source *testsuite.Server
	index  *testsuite.Server
	src    *sql.DB
	store  *index.Store
}

func newEnv(t *testing.T, sourceArgs ...string) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx}
	e.source = testsuite.StartSourceWith(t, sourceArgs...)
	e.index = testsuite.StartIndex(t)
	if err := e.index.Exec(ctx, "CREATE DATABASE dbtrail"); err != nil {
		t.Fatal(err)
	}
	if err := e.source.Exec(ctx, "CREATE DATABASE app"); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.src, err = e.source.DB(ctx, "app"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.src.Close() })
	if e.store, err = index.Open(ctx, e.index.DSN("dbtrail")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.store.Close() })
	if err := e.store.Init(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) exec(stmts ...string) {
	e.t.Helper()
	for _, s := range stmts {
		if _, err := e.src.ExecContext(e.ctx, s); err != nil {
			e.t.Fatalf("%s: %v", s, err)
		}
	}
}

// proc is a running `dbtrail capture`.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startCapture runs `dbtrail capture` with the DSNs in its environment (never
// in argv) and extra flags.
func (e *env) startCapture(args ...string) *proc {
	e.t.Helper()
	p := &proc{done: make(chan struct{})}
	p.cmd = exec.Command(dbtrailBin, append([]string{"capture", "--metrics-addr="}, args...)...)
	p.cmd.Env = append(os.Environ(),
		"DBTRAIL_SOURCE_DSN="+e.source.DSN(""),
		"DBTRAIL_INDEX_DSN="+e.index.DSN("dbtrail"),
	)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	e.t.Cleanup(func() { p.kill() })
	return p
}

func (p *proc) kill() {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitExit waits for the process to end by itself.
func (p *proc) waitExit(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("capture did not exit within %s; output:\n%s", d, p.output())
		return nil
	}
}

// waitCaughtUp waits until the index checkpoint reaches the source's current
// binlog position.
func (e *env) waitCaughtUp(p *proc) change.Checkpoint {
	e.t.Helper()
	var file string
	var pos uint64
	var ignored1, ignored2 sql.RawBytes
	rows, err := e.src.QueryContext(e.ctx, "SHOW MASTER STATUS")
	if err != nil {
		e.t.Fatal(err)
	}
	cols, _ := rows.Columns()
	vals := []any{&file, &pos, &ignored1, &ignored2}
	for len(vals) < len(cols) {
		vals = append(vals, new(sql.RawBytes))
	}
	rows.Next()
	if err := rows.Scan(vals[:len(cols)]...); err != nil {
		e.t.Fatal(err)
	}
	rows.Close()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		cp, ok, err := e.store.LoadCheckpoint(e.ctx, "main")
		if err != nil {
			e.t.Fatal(err)
		}
		if ok {
			c, err := binlogpos.Compare(cp.Pos().Coords(), binlogpos.Position{File: file, Pos: pos})
			if err != nil {
				e.t.Fatal(err)
			}
			if c >= 0 {
				return cp
			}
		}
		if p != nil && p.exited() {
			e.t.Fatalf("capture exited before catching up: %v\n%s", p.err, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("capture did not reach %s:%d; output:\n%s", file, pos, p.output())
	return change.Checkpoint{}
}

// events returns every indexed event of a table, in seq order.
func (e *env) events(table string) []change.Event {
	e.t.Helper()
	var out []change.Event
	err := e.store.TableChanges(e.ctx, "main", "app", table, 0, 1<<62, func(ev change.Event) error {
		out = append(out, ev)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sortBySeq(out)
	return out
}

func sortBySeq(evs []change.Event) {
	sort.Slice(evs, func(i, j int) bool { return evs[i].Seq < evs[j].Seq })
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// splitSQL splits statements separated by ";\n".
func splitSQL(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ";\n") {
		if strings.TrimSpace(part) != "" {
			out = append(out, part)
		}
	}
	return out
}

func sortSeq[T any](s []T, less func(a, b T) bool) {
	sort.Slice(s, func(i, j int) bool { return less(s[i], s[j]) })
}

// jsonField returns the text of one field of an image.
func jsonField(t *testing.T, img []byte, name string) string {
	t.Helper()
	fields, err := rowimage.DecodeImage(img)
	if err != nil {
		t.Fatalf("decode image %s: %v", img, err)
	}
	for _, f := range fields {
		if f.Name == name {
			return string(f.Raw)
		}
	}
	t.Fatalf("image %s has no field %s", img, name)
	return ""
}
