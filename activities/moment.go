package activities

import (
	"context"
	"errors"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// events is where activities read row changes: the moment seam's events
// source. Today the index alone; when hourly archives land, an
// Activities field with the worker's archive store adds
// moment.ArchiveEvents{Store: …} here through moment.Merge, and every
// reader (refresh windows, exports, history) reads archived hours too.
func (a *Activities) events() moment.Events {
	ix := moment.IndexEvents{Store: a.Index}
	if a.Remote == nil {
		return ix
	}
	return moment.Merge(ix, moment.ArchiveEvents{Store: a.archiveFiles()})
}

// archiveFiles lists a source's confirmed hourly archives from the index's
// bookkeeping and opens them on the worker's store: hours that left the
// index are read from there (each file's footer checked against the
// listing, each row group against its digest).
func (a *Activities) archiveFiles() moment.ArchiveFiles {
	return moment.ArchiveFiles{
		List: func(ctx context.Context, source string) ([]moment.ArchiveHour, error) {
			recs, err := a.Index.Archives(ctx, source)
			if err != nil {
				return nil, err
			}
			var out []moment.ArchiveHour
			for _, r := range recs {
				if r.Confirmed() {
					out = append(out, moment.ArchiveHour{Source: source, Hour: r.Hour, Name: r.Object, FirstSeq: r.FirstSeq, LastSeq: r.LastSeq})
				}
			}
			return out, nil
		},
		OpenFile: func(ctx context.Context, h moment.ArchiveHour) (storage.ReaderAt, error) {
			return a.Remote.OpenReaderAt(ctx, h.Name)
		},
	}
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
