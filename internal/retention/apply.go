package retention

import (
	"context"
	"errors"
	"slices"

	"github.com/dbtrail/dbtrail/internal/storage"
)

// ErrNoStore is Apply's error when the plan removes from object storage
// and no StoreRemover was given (after the local removals).
var ErrNoStore = errors.New("the plan removes from the store and there is no archive location")

// LocalRemover removes local snapshots.
type LocalRemover interface {
	// RemoveLocal removes the local snapshots ids, all under one publish
	// lock; failed names those it could not remove, err a failure that
	// removed none (the lock).
	RemoveLocal(ctx context.Context, ids []string) (failed map[string]error, err error)
}

// StoreRemover removes from object storage. A delete Object Lock refuses
// returns an error matching storage.ErrLocked.
type StoreRemover interface {
	// RemoveSnapshot removes a remote snapshot, manifest first.
	RemoveSnapshot(ctx context.Context, id string) error
	// RemoveHour removes an archived hour's file, then the index's record.
	RemoveHour(ctx context.Context, it Item) error
	// RemoveUnreferenced removes the content objects no remote manifest
	// refers to, past ObjectGrace (Unreferenced): it returns the names
	// removed and, by name, the deletes that failed; err when it could not
	// tell what is referenced (nothing removed then).
	RemoveUnreferenced(ctx context.Context) (removed []string, refused map[string]error, err error)
}

// Refused is an item a run could not remove, with why.
type Refused struct {
	Place string `json:"place"`
	ID    string `json:"id"`
	Error string `json:"error"`
}

// Outcome is what Apply did with a plan.
type Outcome struct {
	// Removed are the items removed.
	Removed []Item
	// Locked are the deletes Object Lock refused: the objects stay whole
	// and a later run tries again.
	Locked []Refused
	// Failed are the removals that failed for another reason.
	Failed []Refused
	// Held are archived hours the plan removed and the run kept: a
	// snapshot before them could not be removed.
	Held []Item
}

// Apply removes what p removes, place by place: the local snapshots (one
// call of local), the remote snapshots, the content objects no remote
// manifest left refers to (store.RemoveUnreferenced, every run with a
// store: also what an upload cut short left), then the archived hours except
// those after a snapshot that could not be removed (Plan.HoursAfter: it
// stays a base, so its hours stay). A failure of one item is recorded
// (Locked when it matches storage.ErrLocked, else Failed) and the run goes
// on; the error is local's own, or ErrNoStore when p removes from the store
// and store is nil.
func Apply(ctx context.Context, p Plan, local LocalRemover, store StoreRemover) (Outcome, error) {
	var out Outcome
	var locals, remotes []Item
	for _, it := range p.Removals() {
		switch it.Place {
		case PlaceLocal:
			locals = append(locals, it)
		case PlaceRemote:
			remotes = append(remotes, it)
		}
	}
	if err := out.removeLocal(ctx, local, locals); err != nil {
		return out, err
	}
	if len(p.Removals()) > len(locals) && store == nil {
		return out, ErrNoStore
	}
	for _, it := range remotes {
		out.record(it, store.RemoveSnapshot(ctx, it.ID))
	}
	if store != nil {
		out.removeObjects(ctx, store)
	}
	left := map[string]bool{}
	for _, f := range append(slices.Clone(out.Locked), out.Failed...) {
		left[f.Place+"/"+f.ID] = true
	}
	hours, held := p.HoursAfter(left)
	out.Held = held
	for _, it := range hours {
		out.record(it, store.RemoveHour(ctx, it))
	}
	return out, nil
}

func (o *Outcome) removeLocal(ctx context.Context, local LocalRemover, items []Item) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	failed, err := local.RemoveLocal(ctx, ids)
	if err != nil {
		return err
	}
	for _, it := range items {
		o.record(it, failed[it.ID])
	}
	return nil
}

// removeObjects removes the unreferenced content objects and records
// each (Place PlaceObject, ID its name), a failure to judge them as one
// Failed item named PlaceObject.
func (o *Outcome) removeObjects(ctx context.Context, store StoreRemover) {
	removed, refused, err := store.RemoveUnreferenced(ctx)
	if err != nil {
		o.Failed = append(o.Failed, Refused{Place: PlaceObject, ID: PlaceObject + "s", Error: err.Error()})
	}
	for _, name := range removed {
		o.Removed = append(o.Removed, Item{Place: PlaceObject, ID: name, Reason: "no kept manifest refers to it"})
	}
	names := make([]string, 0, len(refused))
	for name := range refused {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		o.record(Item{Place: PlaceObject, ID: name}, refused[name])
	}
}

// record notes the removal of it: done when err is nil, else Locked or
// Failed.
func (o *Outcome) record(it Item, err error) {
	switch {
	case err == nil:
		o.Removed = append(o.Removed, it)
	case errors.Is(err, storage.ErrLocked):
		o.Locked = append(o.Locked, Refused{Place: it.Place, ID: it.ID, Error: err.Error()})
	default:
		o.Failed = append(o.Failed, Refused{Place: it.Place, ID: it.ID, Error: err.Error()})
	}
}
