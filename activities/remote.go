package activities

import (
	"context"
	"errors"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
)

// mirror returns the remote mirror of a source's folder.
func (a *Activities) mirror(ctx context.Context, source string) (*remote.Mirror, error) {
	m, err := remote.New(a.Remote, source, a.sourceDir(source), a.log(ctx))
	if err != nil {
		return nil, nonRetryable(payload.ErrBadInput, err)
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
func (a *Activities) UploadSnapshot(ctx context.Context, in calls.UploadSnapshotInput) (calls.UploadSnapshotResult, error) {
	if a.Remote == nil {
		return calls.UploadSnapshotResult{}, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return calls.UploadSnapshotResult{}, err
	}
	set, stop := keepAlive(ctx)
	defer stop()
	stats, err := m.UploadPending(ctx, in.SnapshotID, func(p remote.Progress) { set(p) })
	res := calls.UploadSnapshotResult{Location: a.Remote.Location()}
	for _, st := range stats {
		res.Add(st)
	}
	return res, transferErr(err)
}

// DownloadCurrent makes sure a refresh has its previous snapshot on local
// disk: when the source folder has no current snapshot (the folder was lost,
// or this is a new machine) and the remote store has one, that snapshot is
// downloaded with every file of its chains, each checked against the
// manifest's sha256 (remote.Mirror.DownloadCurrent), installed under snapshots/
// and made current, under the publish lock and only while current is still
// missing. Otherwise it does nothing and says why. It heartbeats its
// progress and resumes a download an earlier attempt left. A remote file
// that differs from the manifest is BrokenSnapshot. Before it downloads,
// the source folder's free space is checked against the objects' sizes
// (less what an earlier attempt downloaded): too little is NoRoom.
func (a *Activities) DownloadCurrent(ctx context.Context, in calls.DownloadCurrentInput) (calls.DownloadCurrentResult, error) {
	if a.Remote == nil {
		return calls.DownloadCurrentResult{Reason: "no remote store"}, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return calls.DownloadCurrentResult{}, err
	}
	set, stop := keepAlive(ctx)
	defer stop()
	var est *spaceneed.Estimate
	fits := func(id string, need uint64) error {
		e := spaceneed.Exact(need)
		est = &e
		return a.checkSpace(m.Dir, e, "download snapshot "+id)
	}
	f, err := m.DownloadCurrent(ctx, fits, func(p remote.Progress) { set(p) })
	res := calls.DownloadCurrentResult{Location: a.Remote.Location(), SnapshotID: f.SnapshotID, Reason: f.Reason, Stats: f.Stats}
	if est != nil && err == nil {
		res.Space = spaceneed.Record(spaceneed.KindDownload, *est, uint64(max(f.Stats.BytesDownloaded, 0)))
	}
	return res, transferErr(err)
}

// transferErr marks content that differs from its manifest (a local file on
// upload, a remote object on download) as BrokenSnapshot: a retry reads
// the same bytes.
func transferErr(err error) error {
	var sde *storage.DigestError
	var de *snapshot.DigestError
	switch {
	case errors.As(err, &sde) || errors.As(err, &de):
		return nonRetryable(payload.ErrBrokenSnapshot, err)
	case errors.Is(err, remote.ErrConflict):
		return nonRetryable(payload.ErrRemoteConflict, err)
	}
	return err
}

// remoteTaken returns an exists function for snapshot.NewSnapshotID that
// also refuses ids the remote store holds objects of (remote.Mirror.TakenOr).
func (a *Activities) remoteTaken(ctx context.Context, source string, local func(string) (bool, error)) func(string) (bool, error) {
	if a.Remote == nil {
		return local
	}
	m, err := a.mirror(ctx, source)
	if err != nil {
		return local
	}
	return m.TakenOr(ctx, local)
}
