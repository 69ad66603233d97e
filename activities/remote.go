package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// mirror returns the remote mirror of a source's folder.
func (a *Activities) mirror(ctx context.Context, source string) (*remote.Mirror, error) {
	m, err := remote.New(a.Remote, source, a.sourceDir(source), a.log(ctx))
	if err != nil {
		return nil, nonRetryable(ErrBadInput, err)
	}
	return m, nil
}

// UploadSnapshot copies to the remote store, oldest first, every published
// local snapshot of the source up to in.SnapshotID that is not confirmed
// there yet: this run's snapshot, and before it any whose upload failed in
// an earlier run (remote.Mirror.Upload: files first, each confirmed, files
// the previous snapshot holds copied inside the store, the manifest last,
// then the current pointer, forward only; then the local marker). Without
// a remote store it does nothing. It heartbeats its progress; a retry skips
// the snapshots confirmed and the objects already stored. A local file that
// differs from its manifest is BrokenSnapshot; an unreachable store is
// retried and, after the attempt limit, fails the run with the local copy
// kept (retention never removes an unconfirmed snapshot).
func (a *Activities) UploadSnapshot(ctx context.Context, in UploadSnapshotInput) (UploadSnapshotResult, error) {
	if a.Remote == nil {
		return UploadSnapshotResult{}, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return UploadSnapshotResult{}, err
	}
	set, stop := keepAlive(ctx)
	defer stop()
	pending, err := m.Pending(in.SnapshotID)
	if err != nil {
		return UploadSnapshotResult{}, fmt.Errorf("upload snapshots of %s: %w", in.Source, err)
	}
	res := UploadSnapshotResult{Location: a.Remote.Location()}
	for _, id := range pending {
		st, err := m.Upload(ctx, id, func(p remote.Progress) { set(p) })
		if err != nil {
			return res, transferErr(err)
		}
		res.add(st)
	}
	return res, nil
}

// add counts one snapshot's upload into the totals.
func (r *UploadSnapshotResult) add(st remote.UploadStats) {
	r.Snapshots = append(r.Snapshots, st)
	r.Current = st.Current
	r.FilesUploaded += st.Uploaded
	r.FilesCopied += st.Copied
	r.FilesSkipped += st.Skipped
	r.BytesUploaded += st.BytesUploaded
	r.BytesCopied += st.BytesCopied
	r.BytesSkipped += st.BytesSkipped
}

// DownloadCurrent makes sure a refresh has its previous snapshot on local
// disk: when the source folder has no current snapshot (the folder was lost,
// or this is a new machine) and the remote store has one, that snapshot is
// downloaded with every file of its chains, each checked against the
// manifest's sha256 (remote.Mirror.Download), installed under snapshots/
// and made current, under the publish lock and only while current is still
// missing. Otherwise it does nothing and says why. It heartbeats its
// progress and resumes a download an earlier attempt left. A remote file
// that differs from the manifest is BrokenSnapshot. Before it downloads,
// the source folder's free space is checked against the objects' sizes
// (less what an earlier attempt downloaded): too little is NoRoom.
func (a *Activities) DownloadCurrent(ctx context.Context, in DownloadCurrentInput) (DownloadCurrentResult, error) {
	if a.Remote == nil {
		return DownloadCurrentResult{Reason: "no remote store"}, nil
	}
	res := DownloadCurrentResult{Location: a.Remote.Location()}
	dir := a.sourceDir(in.Source)
	if missing, err := currentMissing(dir); err != nil || !missing {
		res.Reason = "the current snapshot is on local disk"
		if err != nil {
			res.Reason = "the local current snapshot does not open: " + err.Error()
		}
		return res, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return res, err
	}
	id, err := m.Current(ctx)
	if err != nil {
		return res, fmt.Errorf("download current snapshot of %s: %w", in.Source, err)
	}
	if id == "" {
		res.Reason = "no current snapshot on the remote store"
		return res, nil
	}
	need, err := m.DownloadNeed(ctx, id)
	if err != nil {
		return res, transferErr(err)
	}
	if err := a.checkRoom(dir, need, "download snapshot "+id); err != nil {
		return res, err
	}
	set, stop := keepAlive(ctx)
	defer stop()
	if res.Stats, err = m.Download(ctx, id, func(p remote.Progress) { set(p) }); err != nil {
		return res, transferErr(err)
	}
	unlock, err := snapshot.LockPublish(ctx, dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	if missing, err := currentMissing(dir); err != nil || !missing {
		res.Reason = "a snapshot was published locally meanwhile"
		return res, nil
	}
	if err := snapshot.SetCurrent(dir, id); err != nil {
		return res, err
	}
	res.SnapshotID = id
	a.log(ctx).Info("previous snapshot downloaded and made current", "source", in.Source, "snapshot", id,
		"location", res.Location, "files", res.Stats.Files, "bytes", res.Stats.BytesDownloaded)
	return res, nil
}

// currentMissing reports whether the source folder has no current snapshot
// to refresh from: no current link, or a link to a snapshot that is gone. A
// current that exists but does not open otherwise is an error.
func currentMissing(dir string) (bool, error) {
	_, err := snapshot.OpenCurrent(dir)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	}
	return false, err
}

// transferErr marks content that differs from its manifest (a local file on
// upload, a remote object on download) as BrokenSnapshot: a retry reads
// the same bytes.
func transferErr(err error) error {
	var sde *storage.DigestError
	var de *snapshot.DigestError
	switch {
	case errors.As(err, &sde) || errors.As(err, &de):
		return nonRetryable(ErrBrokenSnapshot, err)
	case errors.Is(err, remote.ErrConflict):
		return nonRetryable(ErrRemoteConflict, err)
	}
	return err
}

// remoteTaken returns an exists function for snapshot.NewSnapshotID that
// also refuses ids the remote store holds objects of, so that a source
// folder that was lost (ids are times, allocated from what is on disk)
// never reuses the id of a snapshot on the store. A store that does not
// answer is logged and ignored: a backup does not wait for it.
func (a *Activities) remoteTaken(ctx context.Context, source string, local func(string) (bool, error)) func(string) (bool, error) {
	if a.Remote == nil {
		return local
	}
	m, err := a.mirror(ctx, source)
	if err != nil {
		return local
	}
	failed := false
	return func(id string) (bool, error) {
		if taken, err := local(id); taken || err != nil {
			return taken, err
		}
		if failed {
			return false, nil
		}
		taken, err := m.Taken(ctx, id)
		if err != nil {
			failed = true
			a.log(ctx).Warn("cannot check the remote store for the new snapshot id", "snapshot", id, "error", err)
		}
		return taken, nil
	}
}
