package activities

import (
	"context"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/restore"
)

// VerifyRestore fingerprints a loaded table in the target and compares it
// with the rebuilt table's, then, under --replace, swaps it in
// (restore.Target.Verify); a mismatch fails non-retryably, naming the
// table.
func (a *Activities) VerifyRestore(ctx context.Context, in calls.VerifyRestoreInput) (calls.VerifyRestoreResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	sp, job := in.Spec, in.Job
	tg, err := a.openTarget(ctx, sp)
	if err != nil {
		return calls.VerifyRestoreResult{}, err
	}
	defer tg.DB.Close()
	if err := a.checkJobSchemas(tg, sp, job.Schema); err != nil {
		return calls.VerifyRestoreResult{}, err
	}
	v, err := tg.Verify(ctx, restoreOptions(sp), restore.Job(job), *in.Def)
	if err != nil {
		return calls.VerifyRestoreResult(v), restoreErr(err)
	}
	a.log(ctx).Info("restored table verified", "table", job.Target(), "rows", v.Rows, "fingerprint", v.Fingerprint)
	return calls.VerifyRestoreResult(v), nil
}
