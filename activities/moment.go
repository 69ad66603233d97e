package activities

import (
	"context"
	"errors"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
)

// past is the source's whole past (moment.Past): the index, the
// confirmed archived hours on the worker's archive location, and the
// snapshots local and on the store. Every activity that reads the past
// goes through it.
func (a *Activities) past(ctx context.Context, source string) moment.Past {
	free := a.Disk
	if free == nil {
		free = disk.Free
	}
	return moment.Past{Source: source, Index: a.Index, SourceDir: a.sourceDir(source), Archive: a.Remote, Free: free, Log: a.log(ctx)}
}

// events is where activities read row changes: the index merged with the
// archived hours (moment.Past.Events).
func (a *Activities) events(ctx context.Context, source string) moment.Events {
	return a.past(ctx, source).Events()
}

// catalog is where activities find a source's snapshots: its local folder
// and, with a remote store (--archive-url), the snapshots there, a remote
// one downloaded when a rebuild starts from it.
func (a *Activities) catalog(ctx context.Context, source string) (moment.Catalog, error) {
	cat, err := a.past(ctx, source).Catalog(ctx)
	if err != nil {
		return nil, nonRetryable(payload.ErrBadInput, err)
	}
	return cat, nil
}

// momentErr classifies an error of the moment seam: a moment or table it
// refuses, a snapshot that fails its digests or is gone, an event that
// cannot be folded, a folder without room for a snapshot downloaded from
// the store are non-retryable with their types; anything else (I/O, the
// index) is returned as is, to be retried.
func momentErr(err error) error {
	if err == nil {
		return nil
	}
	var se *moment.SnapshotError
	var de *snapshot.DigestError
	var nr *disk.NoSpaceError
	switch r, refused := moment.IsRefused(err); {
	case errors.As(err, &nr):
		return nonRetryable(payload.ErrNoSpace, err)
	case refused && (r.Code == moment.CodeUnknownTable):
		return nonRetryable(payload.ErrBadInput, err)
	case refused:
		return nonRetryable(payload.ErrPositionNotCovered, err)
	case errors.Is(err, moment.ErrSnapshotGone):
		return nonRetryable(payload.ErrSnapshotGone, err)
	case errors.As(err, &se), errors.As(err, &de):
		return nonRetryable(payload.ErrBrokenSnapshot, err)
	}
	return windowErr(err)
}
