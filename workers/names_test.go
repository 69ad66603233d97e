package workers

import (
	"reflect"
	"slices"
	"testing"

	"go.temporal.io/sdk/activity"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
)

// TestActivityNames: the activity names the workflows schedule
// (calls.Names) are exactly the methods a worker registers
// (activities.Activities), so a workflow never schedules an activity no
// worker runs and every activity has its name.
func TestActivityNames(t *testing.T) {
	typ := reflect.TypeOf(&activities.Activities{})
	var methods []string
	for i := range typ.NumMethod() {
		methods = append(methods, typ.Method(i).Name)
	}
	names := slices.Clone(calls.Names)
	slices.Sort(names)
	if !slices.Equal(methods, names) {
		t.Fatalf("activities.Activities has methods %v; calls.Names is %v", methods, names)
	}
	if len(slices.Compact(names)) != len(calls.Names) {
		t.Fatalf("calls.Names lists a name twice: %v", calls.Names)
	}
}

// activityRecorder records what RegisterAll registers: workflows by name,
// the activity structs, and the type of each activity registered under a
// name of its own.
type activityRecorder struct {
	countingRegistry
	structs int
	named   map[string]reflect.Type // registered name: the function's type
}

func (r *activityRecorder) RegisterActivity(a interface{}) { r.structs++ }

func (r *activityRecorder) RegisterActivityWithOptions(a interface{}, o activity.RegisterOptions) {
	r.named[o.Name] = reflect.TypeOf(a)
}

// TestRenamedActivitiesAreRegistered: every old name of calls.Renamed is
// registered, as the activity of its new name (the same signature: each
// activity has an input type of its own), beside the struct's own names,
// so that a run started before the rename finishes on a new worker; the
// workflow is registered under its old name RestoreIndex too.
func TestRenamedActivitiesAreRegistered(t *testing.T) {
	r := &activityRecorder{named: map[string]reflect.Type{}}
	acts := &activities.Activities{}
	RegisterAll(r, acts)
	if r.structs != 1 {
		t.Fatalf("registered %d activity structs, want 1", r.structs)
	}
	for old, name := range calls.Renamed {
		want := reflect.ValueOf(acts).MethodByName(name).Type()
		if r.named[old] != want {
			t.Errorf("old name %s registers a %v, want the activity %s (%v)", old, r.named[old], name, want)
		}
	}
	if !slices.Contains(r.names, "RestoreIndex") || !slices.Contains(r.names, "Reindex") {
		t.Errorf("workflows registered %v: want Reindex and its old name RestoreIndex", r.names)
	}
}
