package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/testsuite"
)

// rssChildEnv, when set, makes dbtrail-bench a child that runs one refresh
// (the JSON rssChildConfig in the variable) and prints its rssChildResult:
// the parent reads the child's peak RSS from its rusage, which then covers
// that refresh alone.
const rssChildEnv = "DBTRAIL_BENCH_RSS_CHILD"

type rssChildConfig struct {
	DSN        string
	BackupDir  string
	WorkDir    string
	FoldMemory string
	In         calls.RefreshTableInput
}

type rssChildResult struct {
	Nanos int64
	Bytes int64
}

// rssChild runs the pair of window k of tb in a child process and returns
// the child's peak RSS in bytes and the pair's time and bytes written.
func (e *refreshEnv) rssChild(ctx context.Context, tb *refreshFixture, k int) (int64, refreshRun, error) {
	id := e.nextID()
	defer os.RemoveAll(snapshot.Folder(e.sourceDir(tb.source)).Staging(id))
	var res rssChildResult
	rss, err := runChild(ctx, "refresh", rssChildEnv, rssChildConfig{DSN: e.dsn, BackupDir: e.acts.BackupDir, WorkDir: e.acts.WorkDir,
		FoldMemory: e.acts.FoldMemory, In: e.input(tb, k, foldplan.ActionPair, id)}, &res)
	if err != nil {
		return 0, refreshRun{}, fmt.Errorf("window %d of %s: %w", k, tb.source, err)
	}
	return rss, refreshRun{elapsed: time.Duration(res.Nanos), bytes: res.Bytes}, nil
}

// runChild runs this executable as the child named name: cfg as JSON in
// the environment variable envVar, its stdout (JSON) decoded into out. It
// returns the child's peak RSS in bytes (from its rusage).
func runChild(ctx context.Context, name, envVar string, cfg, out any) (int64, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return 0, err
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), envVar+"="+string(b))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s child: %w", name, err)
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return 0, fmt.Errorf("%s child output %q: %w", name, stdout.String(), err)
	}
	var own struct{ PeakRSS int64 }
	if err := json.Unmarshal(stdout.Bytes(), &own); err == nil && own.PeakRSS > 0 {
		return own.PeakRSS, nil
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, fmt.Errorf("no rusage of the %s child", name)
	}
	return maxRSSBytes(ru), nil
}

// writeChildResult is a child's side of runChild: v (a struct) as one JSON
// object on stdout, with the child's own peak RSS added as PeakRSS when
// the system tells it. The parent's rusage of the child is no measure on
// Linux: Go starts a child with vfork (CLONE_VM), so until its exec the
// child runs in the parent's address space, and exec folds that address
// space's high-water mark (the benchmark's own peak, 1.7 GiB after the
// other benchmarks) into the child's ru_maxrss.
func writeChildResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	if peak, err := testsuite.PeakRSS(os.Getpid()); err == nil && peak > 0 {
		fields["PeakRSS"] = json.RawMessage(fmt.Sprint(peak))
	}
	return json.NewEncoder(os.Stdout).Encode(fields)
}

// childStore decodes a child's cfg (the value of its environment
// variable) into c and opens the index at cfg's DSN.
func childStore(ctx context.Context, cfg string, c any) (*index.Store, error) {
	var d struct{ DSN string }
	if err := json.Unmarshal([]byte(cfg), &d); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cfg), c); err != nil {
		return nil, err
	}
	return index.Open(ctx, d.DSN)
}

// runRSSChild is the child's side: cfg is the value of rssChildEnv.
func runRSSChild(cfg string) error {
	var c rssChildConfig
	ctx := context.Background()
	store, err := childStore(ctx, cfg, &c)
	if err != nil {
		return err
	}
	defer store.Close()
	acts := &activities.Activities{Index: store, BackupDir: c.BackupDir, WorkDir: c.WorkDir, FoldMemory: c.FoldMemory}
	r, err := executeRefresh(acts, c.In)
	if err != nil {
		return err
	}
	return writeChildResult(rssChildResult{Nanos: int64(r.elapsed), Bytes: r.bytes})
}

// maxRSSBytes is ru_maxrss in bytes (KiB on Linux, bytes on macOS).
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
