package workers

import (
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/workflows"
)

// RegisterAll registers every dbtrail workflow, and the activities of acts,
// on w (plus Ping, a health check).
func RegisterAll(w worker.Worker, acts *activities.Activities) {
	Register(w)
	w.RegisterWorkflow(workflows.FullBackup)
	w.RegisterWorkflow(workflows.Refresh)
	w.RegisterWorkflow(workflows.Compact)
	w.RegisterWorkflow(workflows.Export)
	w.RegisterWorkflow(workflows.Archive)
	w.RegisterWorkflow(workflows.RestoreIndex)
	w.RegisterWorkflow(workflows.Restore)
	w.RegisterActivity(acts)
}
