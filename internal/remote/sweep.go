package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Leftover parts. A spread refresh's parts of snapshot id belong to the
// workflow run that allocated id: every shared table records that run in
// <source>/parts/<id>.owner (PutPartsOwner) before it puts its first part.
// The upload of a published snapshot and a failed run's cleanup delete
// <source>/parts/<id>/ but leave the owner record, so that a part whose
// put was still in flight then (a worker cut off from Temporal), or the
// parts of a run whose cleanup never ran, are still known as that run's:
// SweepParts deletes them, and the record, once Temporal says the run no
// longer runs (PartsOrphan), never judged by age. The record goes only
// with the last part: while Object Lock retains one, or when one was put
// during the sweep, the record stays (or is put back) for a later sweep.

// partsOwnerSuffix ends the name of the owner record of a snapshot's parts.
const partsOwnerSuffix = ".owner"

// maxOwnerSize bounds an owner record read into memory.
const maxOwnerSize = 4 << 10

// partsOwnerName is the name of the owner record of snapshot id's parts.
func (m *Mirror) partsOwnerName(id string) string {
	return path.Join(m.Source, PartsDir, id) + partsOwnerSuffix
}

// PutPartsOwner records run o as the owner of the parts of snapshot id
// (idempotent: every shared table of the run puts the same record).
func (m *Mirror) PutPartsOwner(ctx context.Context, id string, o snapshot.Owner) error {
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return err
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	d := digest.Bytes(b)
	err = m.send(ctx, m.partsOwnerName(id), d, &tracker{}, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		return fmt.Errorf("record the owner of the parts of snapshot %s on %s: %w", id, m.Store.Location(), err)
	}
	return nil
}

// PartsFolder is what the store holds under <source>/parts/ for one
// snapshot id: how many parts, and the run recorded as their owner (nil
// when no record is there). Err, when not nil, says why the folder cannot
// be judged (its name is not a snapshot id, its owner record cannot be
// read or parsed): it is left as it is.
type PartsFolder struct {
	ID    string
	Parts int
	Owner *snapshot.Owner
	Err   error
}

// PartsFolders lists the snapshot ids that have parts or an owner record
// under <source>/parts/, in byte order, each with its owner record read.
// It fails only when the listing does; what concerns one folder alone
// (a name that is not a snapshot id, an owner record that cannot be read
// or parsed) is that folder's Err, and its record is not read.
func (m *Mirror) PartsFolders(ctx context.Context) ([]PartsFolder, error) {
	prefix := path.Join(m.Source, PartsDir) + "/"
	names, err := m.names(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list parts on %s: %w", m.Store.Location(), err)
	}
	var out []PartsFolder
	at := map[string]int{}
	get := func(id string) *PartsFolder {
		i, ok := at[id]
		if !ok {
			i = len(out)
			at[id] = i
			out = append(out, PartsFolder{ID: id})
		}
		return &out[i]
	}
	var owned []string
	for _, name := range names {
		rest := strings.TrimPrefix(name, prefix)
		if id, _, ok := strings.Cut(rest, "/"); ok {
			get(id).Parts++
		} else if id, ok := strings.CutSuffix(rest, partsOwnerSuffix); ok {
			get(id)
			owned = append(owned, id)
		}
	}
	for i := range out {
		if _, err := snapshot.ParseSnapshotID(out[i].ID); err != nil {
			out[i].Err = fmt.Errorf("%s%s on %s: %w", prefix, out[i].ID, m.Store.Location(), err)
		}
	}
	for _, id := range owned {
		f := &out[at[id]]
		if f.Err == nil {
			f.Owner, f.Err = m.readPartsOwner(ctx, id)
		}
	}
	return out, nil
}

// readPartsOwner reads the owner record of snapshot id's parts; nil when
// it is gone.
func (m *Mirror) readPartsOwner(ctx context.Context, id string) (*snapshot.Owner, error) {
	name := m.partsOwnerName(id)
	rc, err := m.Store.Open(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s on %s: %w", name, m.Store.Location(), err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxOwnerSize))
	if err != nil {
		return nil, fmt.Errorf("read %s on %s: %w", name, m.Store.Location(), err)
	}
	var o snapshot.Owner
	if err := json.Unmarshal(b, &o); err != nil || o.WorkflowID == "" {
		return nil, fmt.Errorf("owner record %s on %s: not a run (%q)", name, m.Store.Location(), b)
	}
	return &o, nil
}

// RunState is what the orchestrator says of the run that owns some parts.
type RunState int

const (
	// RunUnknown: the run could not be looked up.
	RunUnknown RunState = iota
	// RunRunning: the run is open.
	RunRunning
	// RunEnded: the run is closed, or unknown to the orchestrator (its
	// retention passed).
	RunEnded
)

// PartsOrphan decides whether the parts of f are an orphan that SweepParts
// deletes, and says why in either case. Parts are kept while their id is
// a published snapshot not yet confirmed on the store (pending: its upload
// copies from them), while no owner is recorded (parts put before owners
// were recorded: no run can be asked), and while the owner run runs or
// cannot be looked up. Otherwise the run that owned them is over: nothing
// will read or delete them.
func PartsOrphan(f PartsFolder, run RunState, pending bool) (orphan bool, why string) {
	switch {
	case pending:
		return false, "a published snapshot not uploaded yet: its upload copies from its parts"
	case f.Owner == nil:
		return false, "no owner run recorded"
	case run == RunRunning:
		return false, "its run still runs"
	case run == RunUnknown:
		return false, "its run could not be looked up"
	case f.Parts == 0:
		return true, "owner record of a run that no longer runs"
	}
	return true, "its run no longer runs"
}

// Swept says what SweepParts did with the parts of one snapshot id: the
// names it deleted (the owner record last), those Object Lock retains
// (left as they were), and the parts it found put after it deleted the
// owner record (Late: it put the record back).
type Swept struct {
	Deleted []string
	Locked  []string
	Late    []string
}

// Gone reports whether the parts of the id and their owner record are all
// gone: nothing Locked, nothing Late. Otherwise the owner record stays and
// a later sweep tries again.
func (s Swept) Gone() bool { return len(s.Locked) == 0 && len(s.Late) == 0 }

// SweepParts deletes the parts of snapshot id, then their owner record,
// which names owner: the record goes last, so that a sweep cut short is
// done again. A delete Object Lock refuses is recorded in Locked, not an
// error, and then the record is kept, so that a later sweep (once the
// retention is over) deletes what is left. After the record is deleted,
// the parts are listed again: a part put meanwhile (an attempt of the
// owner run still putting, cut off from Temporal) is recorded in Late and
// the record put back, so that no part is ever left without an owner. Any
// other error is returned, the record kept (or put back).
func (m *Mirror) SweepParts(ctx context.Context, id string, owner snapshot.Owner) (Swept, error) {
	var out Swept
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return out, err
	}
	names, err := m.names(ctx, m.partsPrefix(id))
	if err != nil {
		return out, fmt.Errorf("list parts of snapshot %s on %s: %w", id, m.Store.Location(), err)
	}
	of := "leftover parts of snapshot " + id
	if out.Deleted, out.Locked, err = m.deleteNames(ctx, names, of); err != nil || len(out.Locked) > 0 {
		return out, err // with parts retained, the record is kept for them
	}
	deleted, locked, err := m.deleteNames(ctx, []string{m.partsOwnerName(id)}, of)
	out.Deleted, out.Locked = append(out.Deleted, deleted...), locked
	if err != nil || len(out.Locked) > 0 {
		return out, err // the record itself retained
	}
	late, err := m.names(ctx, m.partsPrefix(id))
	if err == nil && len(late) == 0 {
		return out, nil
	}
	if err != nil {
		err = fmt.Errorf("list parts of snapshot %s on %s after deleting their owner record: %w", id, m.Store.Location(), err)
	}
	out.Late = late
	if perr := m.PutPartsOwner(ctx, id, owner); perr != nil {
		return out, errors.Join(err, fmt.Errorf("put back: %w", perr))
	}
	return out, err
}
