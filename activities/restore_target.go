package activities

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/target"
)

// identityTTL is how long a worker trusts the source's identity it read.
const identityTTL = 10 * time.Minute

// identities caches the identity of each source server, by its DSN, for
// the process (read when a restore opens its target).
type identities struct {
	mu    sync.Mutex
	byDSN map[string]identityAt
}

// sourceIDs is the process's cache of source identities.
var sourceIDs identities

type identityAt struct {
	id target.Identity
	at time.Time
}

// openedTarget is a restore's target as the worker resolved (conf) and
// opened it (restore.Target).
type openedTarget struct {
	restore.Target
	conf target.Target
	// index says the target is the index server (allowed by
	// Target.IndexServer): the index database is never written.
	index bool
}

// resolveTarget is the target sp names: a configured target (sp may not
// carry replicas or a throttle query of its own), or an ad-hoc endpoint on
// a worker that allows them (its password file from the secrets folder
// only). Nothing is connected to. Every refusal is ErrTargetRefused.
func (a *Activities) resolveTarget(sp RestoreSpec) (target.Target, error) {
	ref := sp.Target
	if ref.AdHoc == nil {
		if len(sp.Replicas) > 0 || sp.ThrottleQuery != "" {
			return target.Target{}, refused(fmt.Errorf("restore target %s: its replicas and throttle query are its configuration on the worker, not the caller's", ref.Name))
		}
		t, err := a.Targets.Get(ref.Name)
		if err != nil {
			return target.Target{}, refused(err)
		}
		return t, nil
	}
	if !a.AdHocTargets {
		return target.Target{}, refused(errors.New("this worker restores only into the targets its operator configured (--restore-targets), by name; a target given as a DSN (ad-hoc) is off here (--allow-ad-hoc-targets)"))
	}
	t := target.Target{Name: "ad-hoc", Server: target.Server(*ref.AdHoc), Replace: true, ThrottleQuery: sp.ThrottleQuery}
	for _, r := range sp.Replicas {
		t.Replicas = append(t.Replicas, target.Server(r))
	}
	if err := t.Check(); err != nil {
		return target.Target{}, refused(err)
	}
	for _, s := range append([]target.Server{t.Server}, t.Replicas...) {
		if s.PasswordFile == "" {
			continue
		}
		if err := target.CheckSecretFile(a.AdHocSecrets, s.PasswordFile); err != nil {
			return target.Target{}, refused(err)
		}
	}
	return t, nil
}

// openTarget resolves and opens sp's target and refuses it when it is the
// source server (by identity, whatever address names it) or, unless its
// configuration allows it, the index server. The caller closes db.
func (a *Activities) openTarget(ctx context.Context, sp RestoreSpec) (openedTarget, error) {
	t, err := a.resolveTarget(sp)
	if err != nil {
		return openedTarget{}, err
	}
	db, addr, err := restore.OpenServer(ctx, t.Server, "target")
	if err != nil {
		return openedTarget{}, err
	}
	out := openedTarget{Target: restore.Target{DB: db, Addr: addr, Replicas: t.Replicas, ThrottleQuery: t.ThrottleQuery}, conf: t}
	if out.index, err = a.guardTarget(ctx, sp.Source, t, db); err != nil {
		db.Close()
		return openedTarget{}, err
	}
	return out, nil
}

// guardTarget refuses a target that is the source server, and the index
// server unless t allows it (then it reports index true). The source's
// identity is read from the source (cached for identityTTL); a source
// that cannot be reached is compared by the identity last read, and
// without one the check is logged as skipped (the source is down: the
// target that answered is not it).
func (a *Activities) guardTarget(ctx context.Context, source string, t target.Target, db *sql.DB) (index bool, err error) {
	tid, err := target.Identify(ctx, db)
	if err != nil {
		return false, fmt.Errorf("target %s: %w", t.Name, err)
	}
	sid, ok := a.sourceIdentity(ctx, source)
	if ok && sid.Same(tid) {
		return false, refused(fmt.Errorf("restore target %s is the source server %s (%s): a restore never writes into the source", t.Name, source, tid))
	}
	if !ok {
		a.log(ctx).Warn("the source's identity is unknown (it cannot be reached): the target is not compared with it", "source", source, "target", t.Name)
	}
	if a.Index == nil {
		return false, nil
	}
	iid, err := target.Identify(ctx, a.Index.DB())
	if err != nil {
		return false, fmt.Errorf("index: %w", err)
	}
	if !iid.Same(tid) {
		return false, nil
	}
	if !t.IndexServer {
		return false, refused(fmt.Errorf("restore target %s is dbtrail's index server (%s): allowed only where its configuration says \"index_server\": true", t.Name, tid))
	}
	return true, nil
}

// sourceIdentity is the identity of source's server: read now (and kept),
// or the one read within identityTTL; ok false when neither is known.
func (a *Activities) sourceIdentity(ctx context.Context, source string) (target.Identity, bool) {
	src, err := a.source(source)
	if err != nil {
		return target.Identity{}, false
	}
	sourceIDs.mu.Lock()
	got, have := sourceIDs.byDSN[src.DSN]
	sourceIDs.mu.Unlock()
	if have && time.Since(got.at) < identityTTL {
		return got.id, true
	}
	id, err := a.readSourceIdentity(ctx, source)
	if err != nil {
		a.log(ctx).Warn("source identity not read", "source", source, "error", err.Error())
		return got.id, have
	}
	sourceIDs.mu.Lock()
	if sourceIDs.byDSN == nil {
		sourceIDs.byDSN = map[string]identityAt{}
	}
	sourceIDs.byDSN[src.DSN] = identityAt{id: id, at: time.Now()}
	sourceIDs.mu.Unlock()
	return id, true
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

// checkJobSchemas refuses a restore that would write a schema t does not
// allow (the tables' and the bookkeeping table's), --replace where t does
// not allow it, and, on the index server, the index database.
func (a *Activities) checkJobSchemas(t openedTarget, sp RestoreSpec, schemas ...string) error {
	if err := t.conf.CheckReplace(sp.Replace); err != nil {
		return refused(err)
	}
	for _, s := range append([]string{sp.options().Bookkeeping()}, schemas...) {
		if err := t.conf.CheckSchema(s); err != nil {
			return refused(err)
		}
		if t.index && a.Index != nil && strings.EqualFold(s, a.Index.Database()) {
			return refused(fmt.Errorf("restore target %s: schema %s is dbtrail's index database; a restore never writes into it", t.conf.Name, s))
		}
	}
	return nil
}

// refused is a non-retryable ErrTargetRefused.
func refused(err error) error { return nonRetryable(ErrTargetRefused, err) }
