package moment

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/storage"
)

// archiveFiles lists the source's confirmed archived hours from the index's
// bookkeeping (the archives table) and opens them on the archive location.
// Without a location, an hour the index still holds whole (not dropped
// yet, or restored by reindex) is not listed, so readers of the
// index's hours never need one.
// A listed hour opens only when the stored object has the recorded size;
// its footer is then checked against the record (ArchiveFiles.Open).
func (p Past) archiveFiles() ArchiveFiles {
	sizes := map[string]int64{}
	return ArchiveFiles{
		List: func(ctx context.Context, source string) ([]ArchiveHour, error) {
			recs, err := p.Index.Archives(ctx, source)
			if err != nil {
				return nil, err
			}
			var out []ArchiveHour
			for _, r := range recs {
				if !r.Confirmed() {
					continue
				}
				if p.Archive == nil {
					// Without a location only the hours the index lacks
					// matter: they are listed, and refuse when opened.
					held, err := p.Index.CountHour(ctx, source, r.Hour)
					if err != nil {
						return nil, err
					}
					if held >= r.Events {
						continue
					}
				}
				sizes[r.Object] = r.Size
				out = append(out, ArchiveHour{Source: source, Hour: r.Hour, Name: r.Object, FirstSeq: r.FirstSeq, LastSeq: r.LastSeq, Events: r.Events})
			}
			return out, nil
		},
		OpenFile: func(ctx context.Context, h ArchiveHour) (storage.ReaderAt, error) {
			if p.Archive == nil {
				return nil, fmt.Errorf("the hour is archived and no archive location was given (--archive-url or DBTRAIL_ARCHIVE_URL)")
			}
			ra, err := p.Archive.OpenReaderAt(ctx, h.Name)
			if err != nil {
				return nil, err
			}
			if want, ok := sizes[h.Name]; ok && ra.Size() != want {
				ra.Close()
				return nil, fmt.Errorf("the stored object on %s holds %d bytes, the archives record %d", p.Archive.Location(), ra.Size(), want)
			}
			return ra, nil
		},
	}
}
