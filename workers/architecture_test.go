package workers

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
)

// architectureDoc is docs/architecture.md from this package's folder.
const architectureDoc = "../docs/architecture.md"

// TestArchitectureDocMatchesTheCode: docs/architecture.md's package tables
// list every package of the module and no package that is not there, and
// its package count is theirs; its "What is registered" paragraph names
// exactly the workflows RegisterWorkflows registers (Ping aside) and the
// activities of an *activities.Activities, with their counts.
func TestArchitectureDocMatchesTheCode(t *testing.T) {
	b, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)

	listed := packageRows(doc)
	have := modulePackages(t, "..")
	for _, p := range have {
		if !slices.Contains(listed, p) {
			t.Errorf("package %s is in no package table of %s", p, architectureDoc)
		}
	}
	for _, p := range listed {
		if !slices.Contains(have, p) {
			t.Errorf("%s lists package %s, which does not exist", architectureDoc, p)
		}
	}

	if m := regexp.MustCompile("Every package of `go list ./...` \\((\\d+)\\)").FindStringSubmatch(doc); m == nil || m[1] != strconv.Itoa(len(have)) {
		t.Errorf("%s: the package count %v is not the module's %d", architectureDoc, m, len(have))
	}

	var reg countingRegistry
	RegisterWorkflows(&reg)
	wfs := slices.DeleteFunc(reg.names, func(n string) bool { return n == "Ping" })
	checkNamed(t, doc, "the workflows", `and the (\d+) workflows of `+"`workers.RegisterWorkflows`"+`:([^;]*);`, wfs)

	typ := reflect.TypeOf(&activities.Activities{})
	var acts []string
	for i := range typ.NumMethod() {
		acts = append(acts, typ.Method(i).Name)
	}
	checkNamed(t, doc, "the activities", `as an activity, (\d+) of them:([^.]*)\.`, acts)
	if !strings.Contains(doc, "drives all "+strconv.Itoa(len(acts))+" activities") {
		t.Errorf("%s: the errors-wrapped-once sentence does not say all %d activities", architectureDoc, len(acts))
	}
}

// packageRows are the first cells of the rows of every table whose header
// is "| package | owns |", without their backticks and any "(…)" note.
func packageRows(doc string) []string {
	var out []string
	for _, cells := range tableRows(doc, "| package | owns |") {
		name, _, _ := strings.Cut(strings.TrimPrefix(cells[0], "`"), "`")
		out = append(out, name)
	}
	return out
}

// tableRows are the rows that start with a code span ("| `") of every
// table of doc whose header line starts with header, as trimmed cells.
func tableRows(doc, header string) [][]string {
	var out [][]string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case !strings.HasPrefix(line, "|"):
			in = false
		case in && strings.HasPrefix(line, "| `"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			out = append(out, cells)
		}
	}
	return out
}

// modulePackages are the folders below root holding a .go file (a
// package of tests only, as temporal/e2e, counts), as module-relative
// paths (testdata and hidden folders skipped).
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// checkNamed finds pattern (a count, then a list of `names`) in doc and
// compares both with want.
func checkNamed(t *testing.T, doc, what, pattern string, want []string) {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(doc)
	if m == nil {
		t.Errorf("%s: no sentence naming %s (%s)", architectureDoc, what, pattern)
		return
	}
	if n, _ := strconv.Atoi(m[1]); n != len(want) {
		t.Errorf("%s says %d for %s; the code has %d", architectureDoc, n, what, len(want))
	}
	var got []string
	for _, s := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(m[2], -1) {
		got = append(got, s[1])
	}
	slices.Sort(got)
	w := slices.Sorted(slices.Values(want))
	if !slices.Equal(got, w) {
		t.Errorf("%s names %s %v; the code has %v", architectureDoc, what, got, w)
	}
}

// countingRegistry records the names of the workflows registered on it.
type countingRegistry struct{ names []string }

func (r *countingRegistry) RegisterWorkflow(w interface{}) {
	r.names = append(r.names, funcName(w))
}

func (r *countingRegistry) RegisterWorkflowWithOptions(w interface{}, o workflow.RegisterOptions) {
	if o.Name != "" {
		r.names = append(r.names, o.Name)
		return
	}
	r.RegisterWorkflow(w)
}

// funcName is a workflow function's name as Temporal registers it: the
// last element of its qualified name.
func funcName(f interface{}) string {
	full := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	return full[strings.LastIndex(full, ".")+1:]
}
