package workers

import (
	"reflect"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/workflows"
)

// WorkflowRegistry is what workflows are registered on: a worker, or a
// replayer of stored histories (worker.WorkflowReplayer), so both know
// the same workflows.
type WorkflowRegistry interface {
	RegisterWorkflow(w interface{})
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// Registry is what a worker's workflows and activities are registered on:
// a worker.Worker (or a test's recorder of the names).
type Registry interface {
	WorkflowRegistry
	RegisterActivity(a interface{})
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// RegisterWorkflows registers on r every workflow a dbtrail worker runs
// (RegisterAll registers them by this function): Ping and dbtrail's
// workflows. A replayer of stored histories registers them by it too, and
// temporal/e2e/histories_test.go requires a stored history of each.
func RegisterWorkflows(r WorkflowRegistry) {
	registerPing(r)
	r.RegisterWorkflow(workflows.FullBackup)
	r.RegisterWorkflow(workflows.Refresh)
	r.RegisterWorkflow(workflows.Compact)
	r.RegisterWorkflow(workflows.Export)
	r.RegisterWorkflow(workflows.Archive)
	r.RegisterWorkflow(workflows.Reindex)
	// The index rebuild's name before issue 35: its runs and histories.
	r.RegisterWorkflowWithOptions(workflows.Reindex, workflow.RegisterOptions{Name: "RestoreIndex"})
	r.RegisterWorkflow(workflows.Verify)
	r.RegisterWorkflow(workflows.RestoreDrill)
	r.RegisterWorkflow(workflows.Restore)
	r.RegisterWorkflow(workflows.Retention)
	r.RegisterWorkflow(workflows.RetentionPreview)
}

// RegisterAll registers on w every workflow (RegisterWorkflows) and
// activity a dbtrail worker runs: PingActivity (a health check) and the
// activities of acts.
func RegisterAll(w Registry, acts *activities.Activities) {
	RegisterWorkflows(w)
	registerPingActivity(w)
	w.RegisterActivity(acts)
	// The index rebuild's activities under their names before issue 35,
	// for the runs that schedule them so (calls.Renamed).
	for old, name := range calls.Renamed {
		m := reflect.ValueOf(acts).MethodByName(name)
		w.RegisterActivityWithOptions(m.Interface(), activity.RegisterOptions{Name: old})
	}
}
