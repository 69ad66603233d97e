package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/dbtrail/dbtrail/internal/target"
)

// Guard is what a worker knows to resolve a restore's target and to
// refuse one it may not write: its configured targets, whether it takes
// ad-hoc ones (and the folder their password files must be in), its
// index server, and the source's identity.
type Guard struct {
	Targets *target.Set
	// AdHoc lets a restore give its target as an endpoint whose password
	// file is in Secrets (target.SecretsDir).
	AdHoc   bool
	Secrets string
	// Index is the index server's pool (nil: none) and IndexDatabase the
	// index database on it.
	Index         *sql.DB
	IndexDatabase string
	// SourceIdentity is the source server's identity (SourceIdentity
	// of a Identities); ok false when it is unknown.
	SourceIdentity func(ctx context.Context) (id target.Identity, ok bool)
	Log            *slog.Logger
}

// Ref is the target a restore names: a configured target's Name, or, on
// a worker that allows them, an ad-hoc server with its replicas and
// throttle query (a named target's are its configuration).
type Ref struct {
	Name          string
	AdHoc         *target.Server
	Replicas      []target.Server
	ThrottleQuery string
}

// Opened is a restore's target as the worker resolved (Conf) and opened
// it; Index says it is the index server (allowed by Conf.IndexServer).
type Opened struct {
	Target
	Conf  target.Target
	Index bool
}

// Resolve is the target ref names: a configured target (ref may not carry
// replicas or a throttle query of its own), or an ad-hoc server on a
// worker that allows them (its password files from Secrets only).
// Nothing is connected to. Every refusal is KindTargetRefused.
func (g Guard) Resolve(ref Ref) (target.Target, error) {
	if ref.AdHoc == nil {
		if len(ref.Replicas) > 0 || ref.ThrottleQuery != "" {
			return target.Target{}, refused(fmt.Errorf("restore target %s: its replicas and throttle query are its configuration on the worker, not the caller's", ref.Name))
		}
		t, err := g.Targets.Get(ref.Name)
		if err != nil {
			return target.Target{}, refused(err)
		}
		return t, nil
	}
	if !g.AdHoc {
		return target.Target{}, refused(errors.New("this worker restores only into the targets its operator configured (--restore-targets), by name; a target given as a DSN (ad-hoc) is off here (--allow-ad-hoc-targets)"))
	}
	t := target.Target{Name: "ad-hoc", Server: *ref.AdHoc, Replace: true, ThrottleQuery: ref.ThrottleQuery, Replicas: ref.Replicas}
	if err := t.Check(); err != nil {
		return target.Target{}, refused(err)
	}
	for _, s := range append([]target.Server{t.Server}, t.Replicas...) {
		if s.PasswordFile == "" {
			continue
		}
		if err := target.CheckSecretFile(g.Secrets, s.PasswordFile); err != nil {
			return target.Target{}, refused(err)
		}
	}
	return t, nil
}

// Open resolves and opens ref's target and refuses it when it is the
// source server (by identity, whatever address names it) or, unless its
// configuration allows it, the index server. The caller closes its DB.
func (g Guard) Open(ctx context.Context, ref Ref, source string) (Opened, error) {
	t, err := g.Resolve(ref)
	if err != nil {
		return Opened{}, err
	}
	db, addr, err := OpenServer(ctx, t.Server, "target")
	if err != nil {
		return Opened{}, err
	}
	out := Opened{Target: Target{DB: db, Addr: addr, Replicas: t.Replicas, ThrottleQuery: t.ThrottleQuery}, Conf: t}
	if out.Index, err = g.check(ctx, source, t, db); err != nil {
		db.Close()
		return Opened{}, err
	}
	return out, nil
}

// check refuses a target that is the source server, and the index server
// unless t allows it (then it reports index true). A source whose
// identity is unknown (it cannot be reached) is logged as not compared:
// the target that answered is not it.
func (g Guard) check(ctx context.Context, source string, t target.Target, db *sql.DB) (index bool, err error) {
	tid, err := target.Identify(ctx, db)
	if err != nil {
		return false, fmt.Errorf("target %s: %w", t.Name, err)
	}
	sid, ok := target.Identity{}, false
	if g.SourceIdentity != nil {
		sid, ok = g.SourceIdentity(ctx)
	}
	if ok && sid.Same(tid) {
		return false, refused(fmt.Errorf("restore target %s is the source server %s (%s): a restore never writes into the source", t.Name, source, tid))
	}
	if !ok && g.Log != nil {
		g.Log.Warn("the source's identity is unknown (it cannot be reached): the target is not compared with it", "source", source, "target", t.Name)
	}
	if g.Index == nil {
		return false, nil
	}
	iid, err := target.Identify(ctx, g.Index)
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

// CheckSchemas refuses a restore that would write a schema the target
// does not allow (the tables' and the bookkeeping table's), --replace
// where it does not allow it, and, on the index server, the index
// database.
func (g Guard) CheckSchemas(t Opened, o Options, schemas ...string) error {
	if err := t.Conf.CheckReplace(o.Replace); err != nil {
		return refused(err)
	}
	for _, s := range append([]string{o.Bookkeeping()}, schemas...) {
		if err := t.Conf.CheckSchema(s); err != nil {
			return refused(err)
		}
		if t.Index && g.Index != nil && strings.EqualFold(s, g.IndexDatabase) {
			return refused(fmt.Errorf("restore target %s: schema %s is dbtrail's index database; a restore never writes into it", t.Conf.Name, s))
		}
	}
	return nil
}

// refused is a KindTargetRefused.
func refused(err error) error { return fail(KindTargetRefused, err) }

// identityTTL is how long a worker trusts a source's identity it read.
const identityTTL = 10 * time.Minute

// Identities caches the identity of each source server, by its DSN, for
// the process.
type Identities struct {
	mu    sync.Mutex
	byDSN map[string]identityAt
}

type identityAt struct {
	id target.Identity
	at time.Time
}

// Get is the identity of the server dsn names: the one read within
// identityTTL, or read now by read (and kept); a read that fails falls
// back on the last one known (logged). ok false when neither is known.
func (c *Identities) Get(ctx context.Context, dsn string, read func(context.Context) (target.Identity, error), log *slog.Logger) (target.Identity, bool) {
	c.mu.Lock()
	got, have := c.byDSN[dsn]
	c.mu.Unlock()
	if have && time.Since(got.at) < identityTTL {
		return got.id, true
	}
	id, err := read(ctx)
	if err != nil {
		if log != nil {
			log.Warn("source identity not read", "error", err.Error())
		}
		return got.id, have
	}
	c.mu.Lock()
	if c.byDSN == nil {
		c.byDSN = map[string]identityAt{}
	}
	c.byDSN[dsn] = identityAt{id: id, at: time.Now()}
	c.mu.Unlock()
	return id, true
}
