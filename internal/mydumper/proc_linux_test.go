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
