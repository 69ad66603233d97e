package workers

import (
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/workflows"
)

// WorkflowRegistry is what workflows are registered on: a worker, or a
// replayer of stored histories (worker.WorkflowReplayer), so both know
// the same workflows.
type WorkflowRegistry interface {
	RegisterWorkflow(w interface{})
}

// RegisterWorkflows registers every dbtrail workflow on r.
func RegisterWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflow(workflows.FullBackup)
	r.RegisterWorkflow(workflows.Refresh)
	r.RegisterWorkflow(workflows.Compact)
	r.RegisterWorkflow(workflows.Export)
	r.RegisterWorkflow(workflows.Archive)
	r.RegisterWorkflow(workflows.RestoreIndex)
	r.RegisterWorkflow(workflows.Verify)
	r.RegisterWorkflow(workflows.RestoreDrill)
	r.RegisterWorkflow(workflows.Restore)
	r.RegisterWorkflow(workflows.Retention)
	r.RegisterWorkflow(workflows.RetentionPreview)
}

// RegisterAll registers every dbtrail workflow, and the activities of acts,
// on w (plus Ping, a health check).
func RegisterAll(w worker.Worker, acts *activities.Activities) {
	Register(w)
	RegisterWorkflows(w)
	w.RegisterActivity(acts)
}
