package moment

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/storage"
)

// archiveFiles lists the source's confirmed archived hours from the index's
// bookkeeping (the archives table) and opens them on the archive location.
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
				if r.Confirmed() {
					sizes[r.Object] = r.Size
					out = append(out, ArchiveHour{Source: source, Hour: r.Hour, Name: r.Object, FirstSeq: r.FirstSeq, LastSeq: r.LastSeq, Events: r.Events})
				}
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
