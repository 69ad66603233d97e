package workers

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyModules are the engines a client of the workflows must not link:
// DuckDB (cgo, the fold and the query engine) and Arrow (the Parquet codec).
var heavyModules = []string{"github.com/duckdb/", "github.com/apache/arrow-go/"}

// TestClientPackagesLinkNoEngine: the HTTP API, the console's jobs and the
// workflows' payloads (what a client starts, queries and reads) link
// neither DuckDB nor Arrow, so that they stay small and a change of the
// storage format never reaches them. Before issue 35 the API linked 49
// such packages through `activities` and `workflows`.
func TestClientPackagesLinkNoEngine(t *testing.T) {
	for _, pkg := range []string{"../api", "../jobs", "../payload", "../internal/when", "../internal/throttle"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var heavy []string
		for _, dep := range strings.Fields(string(out)) {
			for _, h := range heavyModules {
				if strings.HasPrefix(dep, h) {
					heavy = append(heavy, dep)
				}
			}
		}
		if len(heavy) > 0 {
			t.Errorf("%s links %d packages of DuckDB or Arrow, e.g. %s", pkg, len(heavy), heavy[0])
		}
	}
}
