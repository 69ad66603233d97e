package e2e

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/workers"
)

// nameRecorder is a workers.Registry that records the workflow types
// registered on it, named as the SDK names them.
type nameRecorder struct{ workflows []string }

func (r *nameRecorder) RegisterWorkflow(w interface{}) {
	r.workflows = append(r.workflows, funcName(w))
}

func (r *nameRecorder) RegisterWorkflowWithOptions(w interface{}, o workflow.RegisterOptions) {
	if o.Name == "" {
		o.Name = funcName(w)
	}
	r.workflows = append(r.workflows, o.Name)
}

func (r *nameRecorder) RegisterActivity(interface{}) {}

func (r *nameRecorder) RegisterActivityWithOptions(interface{}, activity.RegisterOptions) {}

// funcName is the workflow type the SDK gives a function registered
// without a name: its name without package path and method value suffix.
func funcName(fn interface{}) string {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	return strings.TrimSuffix(full[strings.LastIndex(full, ".")+1:], "-fm")
}

// historyWorkflowType is the workflow type of a stored history's start.
func historyWorkflowType(t *testing.T, f string) string {
	t.Helper()
	r, err := os.Open(f)
	must(t, err)
	defer r.Close()
	hist, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	start := hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
	if start == nil {
		t.Fatalf("%s: its first event is %s, not the start", f, hist.GetEvents()[0].GetEventType())
	}
	return start.GetWorkflowType().GetName()
}

// TestEveryWorkflowHasAStoredHistory: every workflow a worker registers
// (workers.RegisterAll, which the replayer's workers.RegisterWorkflows is
// part of) has at least one stored history, and every stored history is of
// a registered workflow. A new workflow fails here until a recording
// (TestRecordHistories) stores a history of it. No servers are needed.
func TestEveryWorkflowHasAStoredHistory(t *testing.T) {
	onWorker, onReplayer := &nameRecorder{}, &nameRecorder{}
	workers.RegisterAll(onWorker, &activities.Activities{})
	workers.RegisterWorkflows(onReplayer)
	slices.Sort(onWorker.workflows)
	slices.Sort(onReplayer.workflows)
	if !slices.Equal(onWorker.workflows, onReplayer.workflows) {
		t.Fatalf("the worker registers %v, the replayer %v", onWorker.workflows, onReplayer.workflows)
	}
	stored := map[string][]string{}
	for _, f := range storedHistories(t) {
		rel, _ := filepath.Rel(historiesDir, f)
		typ := historyWorkflowType(t, f)
		stored[typ] = append(stored[typ], rel)
		if !slices.Contains(onWorker.workflows, typ) {
			t.Errorf("%s is a history of %s, which no worker registers", rel, typ)
		}
	}
	for _, name := range onWorker.workflows {
		if len(stored[name]) == 0 {
			t.Errorf("no stored history of workflow %s under %s: record a release (TestRecordHistories) with a case of it", name, historiesDir)
		}
	}
	t.Logf("%d workflows registered: %v", len(onWorker.workflows), onWorker.workflows)
}

// TestChangeIDsAreNamedConstants: every workflow.GetVersion call in
// workflows/ names its change id by a string constant of the package (a
// change id is part of every history recorded since: it is never retyped
// or changed by mistake), no two constants share an id, and every id is
// held by at least one stored history (which TestReplayStoredHistories
// replays). No servers are needed.
func TestChangeIDsAreNamedConstants(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "..", "workflows", "*.go"))
	must(t, err)
	consts := map[string]string{} // constant name: its string value
	var calls []*ast.CallExpr
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		must(t, err)
		collectStringConsts(f, consts)
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok && isGetVersion(c) {
				calls = append(calls, c)
			}
			return true
		})
	}
	if len(calls) == 0 {
		t.Fatal("no workflow.GetVersion call in workflows/: the check would check nothing")
	}
	ids := map[string]string{} // change id: its constant
	for _, c := range calls {
		pos := fset.Position(c.Pos())
		if len(c.Args) != 4 {
			t.Errorf("%s: GetVersion with %d arguments", pos, len(c.Args))
			continue
		}
		id, ok := c.Args[1].(*ast.Ident)
		if !ok {
			t.Errorf("%s: the change id is not a named constant", pos)
			continue
		}
		v, ok := consts[id.Name]
		if !ok {
			t.Errorf("%s: change id %s is not a string constant of package workflows", pos, id.Name)
			continue
		}
		if other, dup := ids[v]; dup && other != id.Name {
			t.Errorf("%s: change id %q is both %s and %s", pos, v, other, id.Name)
		}
		ids[v] = id.Name
	}
	recorded := recordedChangeIDs(t)
	for _, v := range slices.Sorted(maps.Keys(ids)) {
		if recorded[v] == 0 {
			t.Errorf("change id %s = %q is in no stored history: record one that takes its path (TestRecordHistories, or a test's releaseRecorder) so that TestReplayStoredHistories replays it", ids[v], v)
			continue
		}
		t.Logf("change id %s = %q: %d stored histories hold it", ids[v], v, recorded[v])
	}
}

// isGetVersion reports whether c calls workflow.GetVersion.
func isGetVersion(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "GetVersion" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "workflow"
}

// collectStringConsts adds the package-level string constants of f
// (name: unquoted value) to into.
func collectStringConsts(f *ast.File, into map[string]string) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						into[n.Name] = v
					}
				}
			}
		}
	}
}

// recordedChangeIDs counts, per change id, the stored histories whose
// version markers hold it.
func recordedChangeIDs(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range storedHistories(t) {
		r, err := os.Open(f)
		must(t, err)
		hist, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		seen := map[string]bool{}
		for _, ev := range hist.GetEvents() {
			m := ev.GetMarkerRecordedEventAttributes()
			if m == nil || m.GetMarkerName() != "Version" {
				continue
			}
			for _, p := range m.GetDetails()["change-id"].GetPayloads() {
				var id string
				if json.Unmarshal(p.GetData(), &id) == nil && !seen[id] {
					seen[id] = true
					out[id]++
				}
			}
		}
	}
	return out
}
