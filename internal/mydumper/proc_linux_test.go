package mydumper

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperParentEnv makes the test binary run TestMydumperDiesWithItsWorker's
// parent: it starts a mydumper and waits to be killed.
const helperParentEnv = "DBTRAIL_MYDUMPER_HELPER_BIN"

// TestMydumperDiesWithItsWorker: a worker killed (SIGKILL) while mydumper
// runs takes mydumper with it. A child process of the test binary stands in
// for the worker and starts a fake mydumper that records its PID and
// sleeps; once the PID is there the worker is killed, and the fake
// mydumper must end. Without Pdeathsig it slept on (an orphan reading the
// source, as seen after killed workers in the e2e tests).
func TestMydumperDiesWithItsWorker(t *testing.T) {
	if bin := os.Getenv(helperParentEnv); bin != "" {
		r := Run{Bin: bin, DSN: "u:p@tcp(127.0.0.1:1)/", Dir: os.Getenv(helperParentEnv + "_DIR"), Stall: time.Hour, Hang: time.Hour}
		r.Do(context.Background()) // killed before it returns
		return
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	bin := fake(t, "echo $$ > "+pidFile+".tmp && mv "+pidFile+".tmp "+pidFile+"\nexec sleep 600\n")
	worker := exec.Command(os.Args[0], "-test.run=^TestMydumperDiesWithItsWorker$")
	worker.Env = append(os.Environ(), helperParentEnv+"="+bin, helperParentEnv+"_DIR="+dumpDir(t))
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer worker.Process.Kill()
	pid := waitPID(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL) // an orphan must not outlive a failed test
	if err := worker.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	worker.Wait()
	for range 200 { // up to 10 s for the kernel to deliver the signal
		if !alive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("mydumper (pid %d) still runs after its worker was killed", pid)
}

// waitPID waits for the fake mydumper's PID file (up to 30 s) and reads it.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	for range 600 {
		b, err := os.ReadFile(path)
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %q: %v", b, err)
			}
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the fake mydumper never started")
	return 0
}

// alive reports whether pid is a live process (a zombie counts as ended:
// its parent, init, reaps it).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestHungWrapperKilledWithItsChildren: a mydumper started through a wrapper
// (a shell script running the real one as its child, as the e2e tests and a
// containerised install do) that hangs is killed whole: its child, which
// holds the output pipe, dies with it, so Do returns its error instead of
// waiting on the pipe without beating (the Dump activity's heartbeat then
// timed out, and a second attempt ran while the first still waited). The
// child's PID is checked dead afterwards.
func TestHungWrapperKilledWithItsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The child is not exec'd: the shell waits for it, both hold stdout.
	bin := fake(t, "sleep 600 &\necho $! > "+pidFile+"\nwait\n")
	r := Run{Bin: bin, DSN: "u:p@tcp(127.0.0.1:1)/", Dir: dumpDir(t), Stall: 300 * time.Millisecond, Hang: time.Hour}
	done := make(chan error, 1)
	go func() { done <- r.Do(context.Background()) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // a liveness bound, not a timing: it returned in well under a second
		t.Fatal("Do still waits a minute after the stall time: the wrapper's child kept the pipe open")
	}
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("want ErrStalled, got %v", err)
	}
	pid := waitPID(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	for range 200 {
		if !alive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the wrapper's child (pid %d) still runs after Do returned", pid)
}
