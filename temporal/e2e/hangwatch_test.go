package e2e

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

// hangWatchMargin is how long before go test's -timeout the watch reports.
const hangWatchMargin = 4 * time.Minute

// startHangWatch ends the test binary a few minutes before go test's
// -timeout would, printing every goroutine first and, last, the tests still
// running with their own frames. go test's timeout panic names the running
// tests first and then prints every goroutine: with embedded Temporal
// servers that is thousands of lines, and a log that keeps only its tail
// (CI's) loses the names. stop disarms the watch; a run without a timeout
// above twice the margin has none.
func startHangWatch() (stop func()) {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return func() {}
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return func() {}
	}
	limit, _ := g.Get().(time.Duration)
	if limit <= 2*hangWatchMargin {
		return func() {}
	}
	after := limit - hangWatchMargin
	timer := time.AfterFunc(after, func() { reportHang(after, limit) })
	return func() { timer.Stop() }
}

// reportHang prints the stacks and the summary and exits with 2.
func reportHang(after, limit time.Duration) {
	stacks := allStacks()
	_, _ = os.Stderr.Write(stacks)
	tests, ours := hungTests(string(stacks))
	fmt.Fprintf(os.Stderr, "\n=== HANG: the e2e package still runs after %v (go test -timeout %v); its goroutines in dbtrail code:\n", after, limit)
	for _, g := range ours {
		fmt.Fprintln(os.Stderr, g)
	}
	fmt.Fprintf(os.Stderr, "=== HANG: tests still running: %s\n", strings.Join(tests, ", "))
	os.Exit(2)
}

// allStacks is every goroutine's stack, as runtime.Stack prints them.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

var testFrame = regexp.MustCompile(`temporal/e2e\.(Test[A-Za-z0-9_]+)`)

// hungTests reads a dump of all goroutines: the names of the tests on a
// stack (a test still waiting for its parallel turn is marked so), and each
// goroutine that runs dbtrail code, cut to its header, its top frame (what
// it waits on) and its dbtrail frames.
func hungTests(dump string) (tests, ours []string) {
	seen := map[string]bool{}
	for _, g := range strings.Split(dump, "\n\n") {
		if !strings.Contains(g, "github.com/dbtrail/dbtrail/") {
			continue
		}
		waiting := strings.Contains(g, "testing.(*T).Parallel")
		for _, m := range testFrame.FindAllStringSubmatch(g, -1) {
			name := m[1]
			if name == "TestMain" {
				continue
			}
			if waiting {
				name += " (waiting for its parallel turn)"
			}
			seen[name] = true
		}
		if !waiting {
			ours = append(ours, ourFrames(g))
		}
	}
	for name := range seen {
		tests = append(tests, name)
	}
	sort.Strings(tests)
	return tests, ours
}

// ourFrames cuts one goroutine's stack to its header, its top frame and
// the frames in dbtrail's packages (a frame is a function line and its
// file line).
func ourFrames(g string) string {
	lines := strings.Split(strings.TrimSpace(g), "\n")
	if len(lines) == 0 {
		return ""
	}
	out := []string{lines[0]}
	for i := 1; i+1 < len(lines); i += 2 {
		if i == 1 || strings.Contains(lines[i], "github.com/dbtrail/dbtrail/") {
			out = append(out, lines[i], lines[i+1])
		}
	}
	return strings.Join(out, "\n")
}
