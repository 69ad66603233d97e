package activities

import (
	"context"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/restore"
)

// PlanRestore decides a restore before anything is written: the moment's
// cut and plan (moment.Past: every form of T and refusal is export --at's),
// every table's target (restore.Jobs), and the checks that refuse it first
// (restore.Options.Check, openTarget, checkJobSchemas, a replica not reached,
// restore.Target.Prepare, whose bookkeeping table is the only write).
func (a *Activities) PlanRestore(ctx context.Context, in calls.PlanRestoreInput) (_ calls.PlanRestoreResult, err error) {
	_, stop := keepAlive(ctx)
	defer stop()
	defer func() { err = restoreErr(err) }()
	sp := in.Spec
	if _, err := a.source(sp.Source); err != nil {
		return calls.PlanRestoreResult{}, err
	}
	o := restoreOptions(sp)
	at, err := o.Check()
	if err != nil {
		return calls.PlanRestoreResult{}, err
	}
	tg, err := a.openTarget(ctx, sp)
	if err != nil {
		return calls.PlanRestoreResult{}, err
	}
	defer tg.DB.Close()
	if err := a.checkJobSchemas(tg, sp); err != nil {
		return calls.PlanRestoreResult{}, err
	}
	if err := tg.CheckReplicas(ctx); err != nil {
		return calls.PlanRestoreResult{}, err
	}
	plan, _, err := a.past(ctx, sp.Source).Plan(ctx, at, moment.Selection{Schemas: sp.Schemas, Tables: sp.Tables})
	if err != nil {
		return calls.PlanRestoreResult{}, momentErr(err)
	}
	out := calls.PlanRestoreResult{RestoreID: restore.ID(sp.Source, plan.Cut.Seq, o.Mode(), o.IntoSchema), TargetAddr: tg.Addr, Plan: plan}
	jobs, err := restore.Jobs(out.RestoreID, plan, o)
	if err == nil {
		err = a.checkJobSchemas(tg, sp, restore.Schemas(jobs)...)
	}
	if err == nil {
		err = tg.Prepare(ctx, o, jobs)
	}
	if err != nil {
		return calls.PlanRestoreResult{}, err
	}
	out.Jobs = tableJobs(jobs)
	a.log(ctx).Info("restore planned", "restore", out.RestoreID, "tables", len(out.Jobs), "cut", plan.Cut.Seq, "target", tg.Addr)
	return out, nil
}
