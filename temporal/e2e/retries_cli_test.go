package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/flock"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// retryLine is the CLI's retry note: the step, its attempt and the cause.
var retryLine = regexp.MustCompile(`! retrying (\S+)[^!]*\(attempt (\d+) of (\d+)\): (.*)`)

// TestRetriesShownByTheCLI: `dbtrail refresh` while a step of its run
// fails (the backup folder is a regular file) shows, next to its
// progress, the step, its attempt of its limit and the cause naming the
// folder; once the folder is back the step succeeds, the note is gone
// from the lines after it (the publish, held by the test until the CLI
// showed it), and the refresh publishes.
func TestRetriesShownByTheCLI(t *testing.T) {
	e := newBackupEnv(t)
	bin := buildDbtrailAsync(t)
	_, err := e.src.ExecContext(e.ctx, "CREATE TABLE r (id INT PRIMARY KEY, v INT)")
	must(t, err)
	_, err = e.src.ExecContext(e.ctx, "INSERT INTO r VALUES (1, 1), (2, 2)")
	must(t, err)
	e.fullBackup(t)
	_, err = e.src.ExecContext(e.ctx, "UPDATE r SET v = 3 WHERE id = 1")
	must(t, err)
	e.waitCaughtUp(t)

	// The test holds the source's publish lock: once the folder is back,
	// the run waits at its publish, a phase the CLI shows, until the test
	// has seen that line.
	unlock, err := flock.TryLock(filepath.Join(e.acts.BackupDir, "main", snapshot.PublishLockName))
	must(t, err)
	var unlockOnce sync.Once
	release := func() { unlockOnce.Do(unlock) }
	t.Cleanup(release)
	guard := time.AfterFunc(5*time.Minute, release) // against a wait forever, not a bound on time
	defer guard.Stop()

	// The backup folder becomes a file: every step that reads or writes
	// it fails, retryable.
	aside := e.acts.BackupDir + ".aside"
	must(t, os.Rename(e.acts.BackupDir, aside))
	must(t, os.WriteFile(e.acts.BackupDir, []byte("not a folder"), 0o644))
	restored := false
	restore := func() {
		if !restored {
			restored = true
			must(t, os.Remove(e.acts.BackupDir))
			must(t, os.Rename(aside, e.acts.BackupDir))
		}
	}
	t.Cleanup(restore)

	cmd := exec.CommandContext(e.ctx, bin(), "refresh", "--temporal-addr", e.frontend, "--source", "main")
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	must(t, cmd.Start())
	var lines []string
	retried := -1 // index of the first line showing a second failure
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		t.Logf("dbtrail refresh: %s", line)
		lines = append(lines, line)
		m := retryLine.FindStringSubmatch(line)
		if retried >= 0 && strings.Contains(line, " tables — publishing") {
			release()
		}
		if m == nil || retried >= 0 {
			continue
		}
		if n, _ := strconv.Atoi(m[2]); n >= 3 {
			if m[3] != "10" || !strings.Contains(m[4], e.acts.BackupDir) || !strings.Contains(m[4], "not a directory") {
				t.Errorf("retry note %q: want the attempt of 10 and the cause naming %s", line, e.acts.BackupDir)
			}
			retried = len(lines) - 1
			restore()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dbtrail refresh: %v\n%s", err, stdout.String())
	}
	if retried < 0 {
		t.Fatal("no line showed a step failed twice and retried")
	}
	after := lines[retried+1:]
	var publishing bool
	for _, line := range after {
		if strings.Contains(line, "retrying") {
			t.Errorf("a line after the step succeeded still shows a retry: %q", line)
		}
		publishing = publishing || strings.Contains(line, " tables — publishing")
	}
	if !publishing {
		t.Errorf("no progress line of the publish after the step succeeded: %q", after)
	}
	if !strings.Contains(stdout.String(), "published") {
		t.Errorf("refresh output %q: want the snapshot published", stdout.String())
	}
}
