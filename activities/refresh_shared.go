package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"go.temporal.io/sdk/activity"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// One refresh, several workers (docs/workflows.md, "Refresh"): the worker
// that stages the snapshot (the stager, in the refresh's session) plans,
// folds some tables itself and publishes; other live workers fold pair and
// rewrite tables placed on their own queues (RefreshTable with Shared),
// reading the previous snapshot's files from the remote store and putting
// the files they write there; the stager adopts those (AdoptTable).

// WorkerLister lists the identities of the workers that poll a task queue
// and their own queue (WorkerQueue) now.
type WorkerLister interface {
	LiveWorkers(ctx context.Context, taskQueue string) ([]string, error)
}

// WorkerQueue is the task queue only the worker with identity polls,
// beside the shared taskQueue.
func WorkerQueue(taskQueue, identity string) string { return taskQueue + "/worker/" + identity }

// RefreshWorkers names the worker's own queue and the other live workers'
// (see RefreshWorkersResult): the workers a refresh staged here can share
// its tables with.
func (a *Activities) RefreshWorkers(ctx context.Context, in calls.RefreshWorkersInput) (calls.RefreshWorkersResult, error) {
	switch {
	case a.Identity == "" || a.Workers == nil:
		return calls.RefreshWorkersResult{Reason: "this worker polls no queue of its own"}, nil
	case a.Remote == nil:
		return calls.RefreshWorkersResult{Reason: "no remote store (--archive-url) to share the tables' files through"}, nil
	}
	out := calls.RefreshWorkersResult{Self: WorkerQueue(in.TaskQueue, a.Identity)}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return out, err
	}
	if ok, err := m.Confirmed(in.Prev); err != nil {
		return out, err
	} else if !ok {
		out.Reason = "the previous snapshot " + in.Prev + " is not confirmed on " + a.Remote.Location()
		return out, nil
	}
	ids, err := a.Workers.LiveWorkers(ctx, in.TaskQueue)
	if err != nil {
		return out, err
	}
	for _, id := range ids {
		if id != a.Identity {
			out.Others = append(out.Others, WorkerQueue(in.TaskQueue, id))
		}
	}
	slices.Sort(out.Others)
	if len(out.Others) == 0 {
		out.Reason = "no other live worker"
	}
	return out, nil
}

// refreshShared folds a table of a snapshot staged on another worker: it
// fetches the previous snapshot's manifest and the table's files from the
// store into the parts folder (snapshot.Folder.Parts), folds into the
// parts folder's staging, and puts every file it wrote (not the links) on
// the store under its attempt's parts folder (remote.Mirror.PutPart; the
// result's Part names it): a stale attempt never writes a final name. The
// result is RefreshTable's, Stored.
func (a *Activities) refreshShared(ctx context.Context, in calls.RefreshTableInput) (calls.ConvertTableResult, error) {
	tp := in.Table
	if a.Remote == nil {
		return calls.ConvertTableResult{}, badInput(fmt.Errorf("refresh %s: shared with this worker, which has no remote store", tp.Key))
	}
	// Heartbeats from the first fetch to the last put: the attempt has
	// one try and a short heartbeat timeout, and a worker moving a large
	// table file must not count as lost; an attempt the stager gave up
	// on learns it at its next heartbeat (its context is cancelled) and
	// stops putting files.
	_, stop := keepAlive(ctx)
	defer stop()
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	parts := snapshot.Folder(a.sourceDir(in.Source)).Parts()
	man, err := a.fetchPrevTable(ctx, m, parts, in)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	if err := clearParts(parts, in.Prev, in.SnapshotID, man); err != nil {
		return calls.ConvertTableResult{}, err
	}
	prev, mt, err := openPrevTable(string(parts), in)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	est := refreshNeed(prev, mt, tp)
	what := string(tp.Action) + " " + tp.Key.String()
	if err := a.checkSpace(string(parts), est, what); err != nil {
		return calls.ConvertTableResult{}, err
	}
	out, err := a.refreshInto(ctx, in, string(parts), prev, mt)
	if err != nil {
		return calls.ConvertTableResult{}, noSpace(err, string(parts), what)
	}
	recordRefresh(&out, tp, est)
	staging := parts.Staging(in.SnapshotID)
	info := activity.GetInfo(ctx)
	out.Part = fmt.Sprintf("%s-%d", info.ActivityID, info.Attempt)
	// The run is recorded as the parts' owner before any part: SweepParts
	// deletes what it leaves only once that run no longer runs.
	owner := snapshot.Owner{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}
	if err := m.PutPartsOwner(ctx, in.SnapshotID, owner); err != nil {
		return calls.ConvertTableResult{}, transferErr(err)
	}
	for _, f := range writtenFiles(tp.Links, out) {
		if err := m.PutPart(ctx, in.SnapshotID, out.Part, f.Path, filepath.Join(staging, filepath.FromSlash(f.Path)), f.Digest()); err != nil {
			return calls.ConvertTableResult{}, transferErr(err)
		}
	}
	a.log(ctx).Info("shared table folded", "table", tp.Key.String(), "snapshot", in.SnapshotID, "action", string(tp.Action))
	return out, nil
}

// fetchPrevTable brings the previous snapshot's manifest and the table's
// files (table file and chain) from the store into the parts folder and
// returns the manifest. A file the parts folder's cache holds (by sha256,
// partsCache) is linked from there and fetched only when its digest is not
// the manifest's (FetchFile checks what it finds): a pair's table file and
// chain go forward unchanged from refresh to refresh, so a table this
// worker folded last time fetches nothing but the newest pair.
func (a *Activities) fetchPrevTable(ctx context.Context, m *remote.Mirror, parts snapshot.Folder, in calls.RefreshTableInput) (snapshot.Manifest, error) {
	man, mb, err := m.ReadManifest(ctx, in.Prev)
	if err != nil {
		return man, transferErr(err)
	}
	sdir := parts.Snapshot(in.Prev)
	if err := os.MkdirAll(sdir, filemode.Dir()); err != nil {
		return man, err
	}
	if err := atomicfile.Write(filepath.Join(sdir, snapshot.ManifestName), filemode.File(), func(w io.Writer) error {
		_, err := w.Write(mb)
		return err
	}); err != nil {
		return man, err
	}
	mt, ok := man.Table(in.Table.Key.Schema, in.Table.Key.Table)
	if !ok {
		return man, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("refresh %s: not in snapshot %s", in.Table.Key, in.Prev))
	}
	for _, rel := range append([]string{mt.File}, mt.Chain...) {
		p := filepath.Join(sdir, filepath.FromSlash(rel))
		d := digest.Digest(man.Files[rel])
		cached, ok := cachePath(parts, d)
		if ok {
			linkCached(cached, p)
		}
		if err := m.FetchFile(ctx, in.Prev, rel, p, d); err != nil {
			return man, transferErr(err)
		}
		if ok {
			if err := cacheFile(p, cached); err != nil {
				a.log(ctx).Warn("fetched file not cached", "file", p, "error", err)
			}
		}
	}
	return man, nil
}

// cachePath is where the parts folder's cache holds the file with digest
// d; ok is false when d's sha256 is not one (digest.ValidSHA256: no cache
// then).
func cachePath(parts snapshot.Folder, d digest.Digest) (string, bool) {
	if !digest.ValidSHA256(d.SHA256) {
		return "", false
	}
	return parts.Cache(d.SHA256), true
}

// linkCached hard-links the cached file to p when p does not exist yet.
// Nothing is trusted: FetchFile checks the digest of what it finds at p
// and fetches the file again when it differs.
func linkCached(cached, p string) {
	if _, err := os.Lstat(p); err == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(p), filemode.Dir()) == nil {
		_ = os.Link(cached, p)
	}
}

// cacheFile makes cached a hard link to p (checked by FetchFile), replacing
// what was there (a cached file that failed its check is replaced by the
// one fetched again). The link is made in a folder of its own and renamed
// into place, so concurrent tables with files of the same content do not
// meet. The cache only saves fetches: callers ignore its failures.
func cacheFile(p, cached string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if ci, err := os.Stat(cached); err == nil && os.SameFile(fi, ci) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(cached), filemode.Dir()); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(cached), ".link-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	link := filepath.Join(tmp, "f")
	if err := os.Link(p, link); err != nil {
		return err
	}
	return os.Rename(link, cached)
}

// clearParts removes from the parts folder the previous snapshots and
// staging folders of earlier refreshes (one refresh of a source runs at a
// time: the ones not named prev and id are done) and the cached files the
// previous snapshot's manifest man does not list: no table of this
// refresh can need them, and the cache never holds more than one
// snapshot's files.
func clearParts(parts snapshot.Folder, prev, id string, man snapshot.Manifest) error {
	keep := map[string]bool{}
	for _, d := range man.Files {
		keep[d.SHA256] = true
	}
	for dir, keepName := range map[string]func(string) bool{
		parts.Snapshots(): func(n string) bool { return n == prev },
		parts.Staging():   func(n string) bool { return n == id },
		parts.Cache():     func(n string) bool { return keep[n] },
	} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !keepName(e.Name()) {
				if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// AdoptTable brings a shared table's files into the staged snapshot: the
// plan's links from the previous snapshot (local here) and every file the
// other worker wrote, fetched from the store (from the attempt's parts,
// Result.Part) with its digest checked. A
// retry fetches again what is not there yet.
func (a *Activities) AdoptTable(ctx context.Context, in calls.AdoptTableInput) (struct{}, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	if a.Remote == nil {
		return struct{}{}, badInput(fmt.Errorf("adopt %s: this worker has no remote store", in.Table.Key))
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return struct{}{}, err
	}
	dir := a.sourceDir(in.Source)
	b, err := snapshot.AttachBuilder(dir, in.SnapshotID)
	if err != nil {
		return struct{}{}, err
	}
	for _, l := range in.Table.Links {
		from := snapshot.Folder(dir).Snapshot(in.Prev)
		if l.FromCompact {
			return struct{}{}, nonRetryable(payload.ErrBadPlan, fmt.Errorf("adopt %s: a compacted range is never shared", in.Table.Key))
		}
		if err := b.Link(l.Dst, filepath.Join(from, filepath.FromSlash(l.Src)), l.Digest); err != nil {
			return struct{}{}, err
		}
	}
	for _, f := range writtenFiles(in.Table.Links, in.Result) {
		p := filepath.Join(b.Dir(), filepath.FromSlash(f.Path))
		if in.Result.Part == "" { // put at its final name by an earlier release
			err = m.FetchFile(ctx, in.SnapshotID, f.Path, p, f.Digest())
		} else {
			err = m.FetchPart(ctx, in.SnapshotID, in.Result.Part, f.Path, p, f.Digest())
		}
		if err != nil {
			return struct{}{}, transferErr(err)
		}
	}
	return struct{}{}, nil
}

// writtenFiles are the files of a table's result that its refresh wrote
// (table file and chain files), not those it linked from the previous
// snapshot (links): what a shared table puts on the store and its stager
// fetches.
func writtenFiles(links []foldplan.Link, out calls.ConvertTableResult) []calls.ChainFile {
	linked := map[string]bool{}
	for _, l := range links {
		linked[l.Dst] = true
	}
	var files []calls.ChainFile
	for _, f := range append([]calls.ChainFile{{Path: out.File, SHA256: out.SHA256, Size: out.Size}}, out.Chain...) {
		if !linked[f.Path] {
			files = append(files, f)
		}
	}
	return files
}

// writtenBytes is the size of the files out names that are not links.
func writtenBytes(links []foldplan.Link, out calls.ConvertTableResult) uint64 {
	var n uint64
	for _, f := range writtenFiles(links, out) {
		n += uint64(max(f.Size, 0))
	}
	return n
}

// recordRefresh records in out the room of a pair or a rewrite: its
// estimate est and the bytes it wrote (nothing for a link).
func recordRefresh(out *calls.ConvertTableResult, tp foldplan.TablePlan, est spaceneed.Estimate) {
	if tp.Action == foldplan.ActionPair || tp.Action == foldplan.ActionRewrite {
		out.Space = spaceneed.Record(string(tp.Action), est, writtenBytes(tp.Links, *out))
	}
}

// DiscardUnpublished deletes from the store what the shared tables of a
// failed refresh put for its snapshot id (its parts, and the objects of
// the id when the store holds no manifest of it: a published snapshot is
// never touched): see
// remote.Mirror.DiscardUnpublished. An object Object Lock retains is
// logged and left; it does not fail the cleanup. Without a remote store
// it does nothing. Running it again is harmless.
func (a *Activities) DiscardUnpublished(ctx context.Context, in calls.DiscardUnpublishedInput) error {
	if a.Remote == nil {
		return nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return err
	}
	if _, err := snapshot.ParseSnapshotID(in.SnapshotID); err != nil {
		return badInput(err)
	}
	d, err := m.DiscardUnpublished(ctx, in.SnapshotID)
	if err != nil {
		return transferErr(err)
	}
	log := a.log(ctx)
	for _, name := range d.Locked {
		log.Warn("remote object of a failed run left: object lock retains it", "source", in.Source, "snapshot", in.SnapshotID,
			"object", name)
	}
	log.Info("remote objects of a failed run deleted", "source", in.Source, "snapshot", in.SnapshotID,
		"deleted", len(d.Deleted), "locked", len(d.Locked), "published", d.Published)
	return nil
}
