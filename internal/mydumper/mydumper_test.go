package mydumper

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"
)

// fake writes a shell script standing in for mydumper.
func fake(t *testing.T, body string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mydumper")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func dumpDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "20261201T000000Z")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStalledMydumperKilled: a mydumper that prints once and then hangs (as
// one waiting for a lock on the source would) is killed after Stall without
// progress, with what it printed and that the source's threads could not
// be read; Beat was called while it ran. A source it cannot ask never makes
// it a hang (ErrHung, run again), even with Hang shorter than Stall.
func TestStalledMydumperKilled(t *testing.T) {
	var beats atomic.Int32
	r := Run{Bin: fake(t, "echo 'WARNING: Using trx_consistency_only'\nexec sleep 600\n"), DSN: "u:p@tcp(127.0.0.1:1)/",
		Dir: dumpDir(t), Stall: 400 * time.Millisecond, Hang: 100 * time.Millisecond, Beat: func(string) { beats.Add(1) }}
	err := r.Do(context.Background())
	if !errors.Is(err, ErrStalled) || errors.Is(err, ErrHung) || !strings.Contains(err.Error(), "for 400ms") ||
		!strings.Contains(err.Error(), "trx_consistency_only") || !strings.Contains(err.Error(), "source threads unknown") {
		t.Fatalf("want ErrStalled with mydumper's output, got %v", err)
	}
	if beats.Load() == 0 {
		t.Error("no beat while mydumper ran")
	}
}

// TestProgressKeepsMydumperAlive: a mydumper that keeps writing to its
// folder for longer than Stall is not killed.
func TestProgressKeepsMydumperAlive(t *testing.T) {
	dir := dumpDir(t)
	script := "for i in 1 2 3 4 5 6 7 8; do echo row >> \"$4/data\"; sleep 0.1; done\n"
	r := Run{Bin: fake(t, script), DSN: "u:p@tcp(127.0.0.1:1)/db", Dir: dir, Stall: 300 * time.Millisecond}
	if err := r.Do(context.Background()); err != nil {
		t.Fatalf("a mydumper making progress failed: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "data"))
	if err != nil || strings.Count(string(b), "row") != 8 {
		t.Fatalf("the fake did not run to its end: %q, %v", b, err)
	}
}

// TestPasswordInDefaultsFileOnly: the password reaches mydumper in a 0600
// defaults file, never in its arguments, and the file is gone afterwards.
func TestPasswordInDefaultsFileOnly(t *testing.T) {
	dir := dumpDir(t)
	script := "echo \"$@\" > \"$4/args\"\ncp \"$2\" \"$4/cnf\"\nstat -c %a \"$2\" > \"$4/mode\"\n"
	r := Run{Bin: fake(t, script), DSN: "backup:s3cret@tcp(10.0.0.5:3307)/shop", Dir: dir}
	if err := r.Do(context.Background()); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if args := read("args"); strings.Contains(args, "s3cret") || !strings.Contains(args, "--database shop") {
		t.Errorf("arguments %q", args)
	}
	if cnf := read("cnf"); cnf != "[mydumper]\nhost=10.0.0.5\nport=3307\nuser=backup\npassword=s3cret" {
		t.Errorf("defaults file %q", cnf)
	}
	if mode := read("mode"); mode != "600" {
		t.Errorf("defaults file mode %s", mode)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".cnf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("defaults file left behind: %v", err)
	}
}

func TestFailedMydumper(t *testing.T) {
	r := Run{Bin: fake(t, "echo 'Access denied for user'\nexit 2\n"), DSN: "u:p@tcp(127.0.0.1:1)/", Dir: dumpDir(t)}
	err := r.Do(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "Access denied") {
		t.Fatalf("want the exit status and the output, got %v", err)
	}
	if errors.Is(err, ErrStalled) {
		t.Error("a failed mydumper is reported as stalled")
	}
	if err := (Run{DSN: "not a dsn", Dir: dumpDir(t)}).Do(context.Background()); !errors.Is(err, ErrBadDSN) {
		t.Errorf("bad DSN: %v", err)
	}
}

func TestArgs(t *testing.T) {
	cfg, err := driver.ParseDSN("u:p@tcp(h)/")
	if err != nil {
		t.Fatal(err)
	}
	args := Args(cfg, "/d.cnf", "/out", 0, nil)
	if !slices.Contains(args, "--regex") || slices.Contains(args, "--database") {
		t.Errorf("no database: %v", args)
	}
	if i := slices.Index(args, "--threads"); i < 0 || args[i+1] != "2" {
		t.Errorf("default threads: %v", args)
	}
	re := args[slices.Index(args, "--regex")+1]
	for _, s := range []string{"mysql", "information_schema", "performance_schema", "sys"} {
		if !strings.Contains(re, s) {
			t.Errorf("regex %s does not leave out %s", re, s)
		}
	}
	if got := DefaultsFile(cfg); !strings.Contains(got, "port=3306\n") {
		t.Errorf("an address without port: %q", got)
	}
}

// TestArgsTables: a table list replaces the schema selection by a regex
// that matches exactly its names.
func TestArgsTables(t *testing.T) {
	cfg, err := driver.ParseDSN("u:p@tcp(h)/")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := ParseTables([]string{"app.t2", "app.t1", "app.t2", "a$.t$"})
	if err != nil {
		t.Fatal(err)
	}
	args := Args(cfg, "/d.cnf", "/out", 0, tables)
	i := slices.Index(args, "--regex")
	if i < 0 || args[i+1] != `^(a\$\.t\$|app\.t1|app\.t2)$` || slices.Contains(args, "--database") || slices.Contains(args, "--tables-list") {
		t.Fatalf("table list: %v", args)
	}
	re := regexp.MustCompile(args[i+1])
	for name, want := range map[string]bool{"app.t1": true, "app.t2": true, "a$.t$": true, "app.t12": false, "xapp.t1": false, "appxt1": false, "app.T1": false} {
		if re.MatchString(name) != want {
			t.Errorf("regex %s on %s: want %v", args[i+1], name, want)
		}
	}
}

// TestParseTablesRefuses names mydumper's table list cannot carry.
func TestParseTablesRefuses(t *testing.T) {
	for _, bad := range [][]string{nil, {"t1"}, {".t1"}, {"app."}, {"app.t1,app.t2"}, {"app.t'1"}, {"app.a.b"},
		{"app.t 1"}, {"app.t%"}, {"mysql.user"}, {"app.`t`"}, {"app." + strings.Repeat("x", 65)}} {
		if _, err := ParseTables(bad); err == nil {
			t.Errorf("%q: want refused", bad)
		}
	}
	got, err := ParseTables([]string{"app.t_1", "app.été$"})
	if err != nil || len(got) != 2 || got[0].String() != "app.t_1" {
		t.Errorf("good names: %v %v", got, err)
	}
}
