package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/snapshot"
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
	In         activities.RefreshTableInput
}

type rssChildResult struct {
	Nanos int64
	Bytes int64
}

// rssChild runs the pair of window k of tb in a child process and returns
// the child's peak RSS in bytes and the pair's time and bytes written.
func (e *refreshEnv) rssChild(ctx context.Context, tb *refreshFixture, k int) (int64, refreshRun, error) {
	id := e.nextID()
	defer os.RemoveAll(filepath.Join(e.sourceDir(tb.source), snapshot.StagingDir, id))
	cfg, err := json.Marshal(rssChildConfig{DSN: e.dsn, BackupDir: e.acts.BackupDir, WorkDir: e.acts.WorkDir,
		FoldMemory: e.acts.FoldMemory, In: e.input(tb, k, foldplan.ActionPair, id)})
	if err != nil {
		return 0, refreshRun{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, refreshRun{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), rssChildEnv+"="+string(cfg))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, refreshRun{}, fmt.Errorf("refresh child (window %d of %s): %w", k, tb.source, err)
	}
	var res rssChildResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return 0, refreshRun{}, fmt.Errorf("refresh child output %q: %w", stdout.String(), err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, refreshRun{}, fmt.Errorf("no rusage of the refresh child")
	}
	return maxRSSBytes(ru), refreshRun{elapsed: time.Duration(res.Nanos), bytes: res.Bytes}, nil
}

// runRSSChild is the child's side: cfg is the value of rssChildEnv.
func runRSSChild(cfg string) error {
	var c rssChildConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		return err
	}
	ctx := context.Background()
	store, err := index.Open(ctx, c.DSN)
	if err != nil {
		return err
	}
	defer store.Close()
	acts := &activities.Activities{Index: store, BackupDir: c.BackupDir, WorkDir: c.WorkDir, FoldMemory: c.FoldMemory}
	r, err := executeRefresh(acts, c.In)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(rssChildResult{Nanos: int64(r.elapsed), Bytes: r.bytes})
}

// maxRSSBytes is ru_maxrss in bytes (KiB on Linux, bytes on macOS).
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
