package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/payload"
)

// sourceIDs is the process's cache of source identities.
var sourceIDs restore.Identities

// guard is the worker's restore.Guard for a restore from source: its
// configured targets, ad-hoc setting, index server and source identity.
func (a *Activities) guard(ctx context.Context, source string) restore.Guard {
	g := restore.Guard{Targets: a.Targets, AdHoc: a.AdHocTargets, Secrets: a.AdHocSecrets, Log: a.log(ctx),
		SourceIdentity: func(ctx context.Context) (target.Identity, bool) { return a.sourceIdentity(ctx, source) }}
	if a.Index != nil {
		g.Index, g.IndexDatabase = a.Index.DB(), a.Index.Database()
	}
	return g
}

// targetRef is the target sp names, for restore.Guard.
func targetRef(sp payload.RestoreSpec) restore.Ref {
	ref := restore.Ref{Name: sp.Target.Name, ThrottleQuery: sp.ThrottleQuery}
	if sp.Target.AdHoc != nil {
		s := target.Server(*sp.Target.AdHoc)
		ref.AdHoc = &s
	}
	for _, r := range sp.Replicas {
		ref.Replicas = append(ref.Replicas, target.Server(r))
	}
	return ref
}

// resolveTarget is the target sp names (restore.Guard.Resolve).
func (a *Activities) resolveTarget(sp payload.RestoreSpec) (target.Target, error) {
	t, err := a.guard(context.Background(), sp.Source).Resolve(targetRef(sp))
	return t, restoreErr(err)
}

// openTarget resolves and opens sp's target (restore.Guard.Open): never
// the source server, the index server only where its configuration
// allows it. The caller closes its DB.
func (a *Activities) openTarget(ctx context.Context, sp payload.RestoreSpec) (restore.Opened, error) {
	t, err := a.guard(ctx, sp.Source).Open(ctx, targetRef(sp), sp.Source)
	return t, restoreErr(err)
}

// checkJobSchemas refuses schemas t may not hold (restore.Guard.CheckSchemas).
func (a *Activities) checkJobSchemas(t restore.Opened, sp payload.RestoreSpec, schemas ...string) error {
	return restoreErr(a.guard(context.Background(), sp.Source).CheckSchemas(t, restoreOptions(sp), schemas...))
}

// sourceIdentity is the identity of source's server (sourceIDs).
func (a *Activities) sourceIdentity(ctx context.Context, source string) (target.Identity, bool) {
	src, err := a.source(source)
	if err != nil {
		return target.Identity{}, false
	}
	return sourceIDs.Get(ctx, src.DSN, func(ctx context.Context) (target.Identity, error) { return a.readSourceIdentity(ctx, source) },
		a.log(ctx).With("source", source))
}

// readSourceIdentity connects to source's server and reads its identity.
func (a *Activities) readSourceIdentity(ctx context.Context, source string) (target.Identity, error) {
	if src, err := a.source(source); err != nil || src.DSN == "" {
		return target.Identity{}, fmt.Errorf("source %s: no DSN on this worker", source)
	}
	db, err := a.openSource(source)
	if err != nil {
		return target.Identity{}, err
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return target.Identify(cctx, db)
}
