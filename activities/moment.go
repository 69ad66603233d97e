package activities

import (
	"context"
	"errors"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// events is where activities read row changes: the moment seam's events
// source. Today the index alone; when hourly archives land, an
// Activities field with the worker's archive store adds
// moment.ArchiveEvents{Store: …} here through moment.Merge, and every
// reader (refresh windows, exports, history) reads archived hours too.
func (a *Activities) events() moment.Events {
	return moment.IndexEvents{Store: a.Index}
}

// catalog is where activities find a source's snapshots: its local folder
// and, with a remote store (--archive-url), the snapshots there, a remote
// one downloaded when a rebuild starts from it.
func (a *Activities) catalog(ctx context.Context, source string) (moment.Catalog, error) {
	local := moment.LocalCatalog{SourceDir: a.sourceDir(source)}
	if a.Remote == nil {
		return local, nil
	}
	m, err := a.mirror(ctx, source)
	if err != nil {
		return nil, err
	}
	return moment.MirrorCatalog{Local: local, Mirror: m}, nil
}

// momentErr classifies an error of the moment seam: a moment or table it
// refuses, a snapshot that fails its digests or is gone, an event that
// cannot be folded are non-retryable with their types; anything else (I/O,
// the index) is returned as is, to be retried.
func momentErr(err error) error {
	if err == nil {
		return nil
	}
	var se *moment.SnapshotError
	var de *snapshot.DigestError
	switch r, refused := moment.IsRefused(err); {
	case refused && (r.Code == moment.CodeUnknownTable):
		return nonRetryable(ErrBadInput, err)
	case refused:
		return nonRetryable(ErrPositionNotCovered, err)
	case errors.Is(err, moment.ErrSnapshotGone):
		return nonRetryable(ErrSnapshotGone, err)
	case errors.As(err, &se), errors.As(err, &de):
		return nonRetryable(ErrBrokenSnapshot, err)
	}
	return windowErr(err)
}
