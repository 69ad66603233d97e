package activities

import (
	"context"

	"github.com/dbtrail/dbtrail/calls"
)

// RecordDrill writes a restore drill's verdict to the index (table
// restore_drills), where `dbtrail status` reads the last one. Writing the
// same drill again replaces its record.
func (a *Activities) RecordDrill(ctx context.Context, in calls.RecordDrillInput) error {
	return a.Index.RecordDrill(ctx, in.Drill)
}
