package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// UploadPending uploads, oldest first, every published local snapshot up
// to upTo ("": all) that is not confirmed on the store yet (Pending,
// Upload), and returns the stats of those it uploaded, also of those before
// an error.
func (m *Mirror) UploadPending(ctx context.Context, upTo string, progress func(Progress)) ([]UploadStats, error) {
	pending, err := m.Pending(upTo)
	if err != nil {
		return nil, fmt.Errorf("upload snapshots of %s: %w", m.Source, err)
	}
	var out []UploadStats
	for _, id := range pending {
		st, err := m.Upload(ctx, id, progress)
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Fetched says what DownloadCurrent did: the snapshot it made current, or
// why it made none (SnapshotID "" and a Reason).
type Fetched struct {
	SnapshotID string
	Reason     string
	Stats      DownloadStats
}

// DownloadCurrent makes sure the local folder has a current snapshot to
// refresh from: when it has none (CurrentMissing) and the store has one,
// that snapshot is downloaded (Download: every file checked against the
// manifest, resumable) and made current, under the publish lock and only
// while current is still missing. Before it downloads, room gets the
// snapshot and the bytes the download still writes (DownloadNeed); an
// error of room stops it.
func (m *Mirror) DownloadCurrent(ctx context.Context, room func(id string, need uint64) error, progress func(Progress)) (Fetched, error) {
	var res Fetched
	if missing, err := CurrentMissing(m.Dir); err != nil || !missing {
		res.Reason = "the current snapshot is on local disk"
		if err != nil {
			res.Reason = "the local current snapshot does not open: " + err.Error()
		}
		return res, nil
	}
	id, err := m.Current(ctx)
	if err != nil {
		return res, fmt.Errorf("download current snapshot of %s: %w", m.Source, err)
	}
	if id == "" {
		res.Reason = "no current snapshot on the remote store"
		return res, nil
	}
	need, err := m.DownloadNeed(ctx, id)
	if err != nil {
		return res, err
	}
	if err := room(id, need); err != nil {
		return res, err
	}
	if res.Stats, err = m.Download(ctx, id, progress); err != nil {
		return res, err
	}
	unlock, err := snapshot.LockPublish(ctx, m.Dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	if missing, err := CurrentMissing(m.Dir); err != nil || !missing {
		res.Reason = "a snapshot was published locally meanwhile"
		return res, nil
	}
	if err := snapshot.SetCurrent(m.Dir, id); err != nil {
		return res, err
	}
	res.SnapshotID = id
	m.Log.Info("previous snapshot downloaded and made current", "source", m.Source, "snapshot", id,
		"location", m.Store.Location(), "files", res.Stats.Files, "bytes", res.Stats.BytesDownloaded)
	return res, nil
}

// CurrentMissing reports whether the source folder dir has no current
// snapshot to refresh from: no current link, or a link to a snapshot that
// is gone. A current that exists but does not open otherwise is an error.
func CurrentMissing(dir string) (bool, error) {
	_, err := snapshot.OpenCurrent(dir)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	}
	return false, err
}

// TakenOr returns an exists function for snapshot.NewSnapshotID that
// refuses the ids local refuses and those the store holds objects of
// (Taken), so that a source folder that was lost (ids are times, allocated
// from what is on disk) never reuses the id of a snapshot on the store. A
// store that does not answer is logged once and asked no more: a backup
// does not wait for it.
func (m *Mirror) TakenOr(ctx context.Context, local func(string) (bool, error)) func(string) (bool, error) {
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
			m.Log.Warn("cannot check the remote store for the new snapshot id", "snapshot", id, "error", err)
		}
		return taken, nil
	}
}
