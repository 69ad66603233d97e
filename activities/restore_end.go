package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/payload"
)

// EndRestore removes the restore's staged tables from this worker's work
// folder and, for a drill, drops its scratch schemas (restore.Target.DropDrill).
func (a *Activities) EndRestore(ctx context.Context, in calls.EndRestoreInput) error {
	if in.RestoreID == "" || strings.ContainsAny(in.RestoreID, `/\.`) {
		return nonRetryable(payload.ErrBadPath, fmt.Errorf("restore id %q", in.RestoreID))
	}
	if err := os.RemoveAll(a.restoreDir(in.RestoreID)); err != nil {
		return fmt.Errorf("remove staged tables of restore %s: %w", in.RestoreID, err)
	}
	if len(in.DropSchemas) == 0 {
		return nil
	}
	if err := restore.CheckDrillSchemas(in.Spec.Drill, in.DropSchemas); err != nil {
		return restoreErr(err)
	}
	tg, err := a.openTarget(ctx, in.Spec)
	if err != nil {
		return err
	}
	defer tg.DB.Close()
	if err := a.checkJobSchemas(tg, in.Spec, in.DropSchemas...); err != nil {
		return err
	}
	return restoreErr(tg.DropDrill(ctx, restoreOptions(in.Spec), in.RestoreID, in.DropSchemas))
}

// restoreDir is restore id's folder in the worker's work folder.
func (a *Activities) restoreDir(id string) string { return filepath.Join(a.WorkDir, "restore", id) }
