package testsuite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// installScript is the repository-relative path of the dependency installer.
const installScript = "scripts/install-deps.sh"

// installGuard makes Install run the script at most once per process. It is
// the only package-level mutable state.
var installGuard struct {
	once sync.Once
	err  error
}

// Install makes sure the MariaDB server and client, mydumper and sysbench are
// installed, by running scripts/install-deps.sh from the repository root.
//
// The script runs at most once per process; every call returns the result
// of that single run (including its error), and later calls ignore ctx. The
// repository root is $DBTRAIL_REPO_ROOT when set, otherwise the first
// ancestor of the working directory (then of this source file) that holds
// go.mod and the script. When no such root exists, Install succeeds only if
// the tools are already installed.
func Install(ctx context.Context) error {
	installGuard.once.Do(func() {
		installGuard.err = runInstall(ctx)
	})
	return installGuard.err
}

func runInstall(ctx context.Context) error {
	root, err := RepoRoot()
	if err != nil {
		if missing := missingTools(); len(missing) > 0 {
			return fmt.Errorf("install dependencies: %w (missing %s)", err, strings.Join(missing, ", "))
		}
		slog.Warn("testsuite: install script not found; tools already present", "error", err)
		return nil
	}
	script := filepath.Join(root, installScript)
	start := time.Now()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("install dependencies with %s: %w; output tail:\n%s", script, err, tail(out.Bytes(), 40))
	}
	if d := time.Since(start); d > time.Second {
		slog.Info("testsuite: dependencies installed", "script", script, "elapsed", d.Round(time.Millisecond))
	}
	return nil
}

// RepoRoot returns the dbtrail repository root: $DBTRAIL_REPO_ROOT when set,
// otherwise the nearest ancestor of the working directory, then of this
// source file, that contains both go.mod and scripts/install-deps.sh.
func RepoRoot() (string, error) {
	if env := os.Getenv("DBTRAIL_REPO_ROOT"); env != "" {
		if _, err := os.Stat(filepath.Join(env, installScript)); err != nil {
			return "", fmt.Errorf("DBTRAIL_REPO_ROOT=%s: %w", env, err)
		}
		return env, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if isRepoRoot(dir) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("repository root (go.mod with " + installScript + ") not found; set DBTRAIL_REPO_ROOT")
}

func isRepoRoot(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, installScript))
	return err == nil
}

// missingTools lists the required programs that cannot be found.
func missingTools() []string {
	var missing []string
	for _, tool := range []string{"mariadbd", "mariadb", "mariadb-install-db", "mydumper", "sysbench"} {
		if _, err := findBinary(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

// findBinary looks name up on PATH, then in /usr/sbin, /usr/bin and
// /usr/libexec (mariadbd lives in /usr/sbin, which is often not on a
// non-root PATH).
func findBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/libexec", "/usr/local/sbin", "/usr/local/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH or in /usr/sbin (run scripts/install-deps.sh)", name)
}

// Version returns the version string of the installed mariadbd, such as
// "10.11.19-MariaDB-0+deb12u1". It does not start a server.
func Version(ctx context.Context) (string, error) {
	bin, err := findBinary("mariadbd")
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", bin, err, bytes.TrimSpace(out))
	}
	// "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"
	fields := strings.Fields(string(out))
	for i, f := range fields {
		if f == "Ver" && i+1 < len(fields) {
			return fields[i+1], nil
		}
	}
	return "", fmt.Errorf("%s --version: unexpected output %q", bin, bytes.TrimSpace(out))
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
