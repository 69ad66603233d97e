package moment

import (
	"context"
	"fmt"
	"io"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// ArchiveFiles is an ArchiveStore over hourly archive files read with
// internal/archive: the codec is here; where the files are and how they are
// named is the archive workflow's, given as two functions. List names a
// source's hour files with the seqs each spans (from an index of the
// archive, or from their footers: ArchiveHourOf); OpenFile opens one for
// ranged reads (storage.Store.OpenReaderAt for object storage, an
// *os.File with its size on disk).
type ArchiveFiles struct {
	List     func(ctx context.Context, source string) ([]ArchiveHour, error)
	OpenFile func(ctx context.Context, h ArchiveHour) (storage.ReaderAt, error)
}

// Hours lists the hours whose seqs overlap (after, upto] (upto 0: no
// bound).
func (s ArchiveFiles) Hours(ctx context.Context, source string, after, upto uint64) ([]ArchiveHour, error) {
	all, err := s.List(ctx, source)
	if err != nil {
		return nil, err
	}
	var out []ArchiveHour
	for _, h := range all {
		if h.LastSeq > after && (upto == 0 || h.FirstSeq <= upto) {
			out = append(out, h)
		}
	}
	return out, nil
}

// Open opens h's file and checks its footer: every check of
// archive.NewReader (a truncated file, a damaged footer: a
// *archive.CorruptError naming the file), and that it is the hour and seqs
// the listing says. Each row group is checked against its digest when read.
func (s ArchiveFiles) Open(ctx context.Context, h ArchiveHour) (HourFile, error) {
	r, c, err := s.openReader(ctx, h)
	if err != nil {
		return nil, err
	}
	return archiveFile{r: r, c: c}, nil
}

// openReader opens h's file as Open does and returns its reader and what
// closes it.
func (s ArchiveFiles) openReader(ctx context.Context, h ArchiveHour) (*archive.Reader, io.Closer, error) {
	ra, err := s.OpenFile(ctx, h)
	if err != nil {
		return nil, nil, fmt.Errorf("open archive %s: %w", h.Name, err)
	}
	r, err := archive.NewReader(io.NewSectionReader(ra, 0, ra.Size()), ra.Size(), h.Name)
	if err != nil {
		ra.Close()
		return nil, nil, err
	}
	f := r.Footer()
	if f.Source != h.Source || change.HourID(f.Hour) != h.Hour || f.FirstSeq != h.FirstSeq || f.LastSeq != h.LastSeq {
		ra.Close()
		return nil, nil, &archive.CorruptError{File: h.Name, Err: fmt.Errorf("it holds source %s hour %s seqs %d..%d, the listing says %s hour %s seqs %d..%d",
			f.Source, f.Hour.Format("2006-01-02T15Z"), f.FirstSeq, f.LastSeq, h.Source, hourName(h.Hour), h.FirstSeq, h.LastSeq)}
	}
	return r, ra, nil
}

// hourName is an hour as the archive names it in messages.
func hourName(h uint32) string { return change.HourTime(h).Format("2006-01-02T15Z") }

// ArchiveHourOf reads the footer of the archive file name (ra) into its
// listing entry.
func ArchiveHourOf(name string, ra storage.ReaderAt) (ArchiveHour, error) {
	r, err := archive.NewReader(io.NewSectionReader(ra, 0, ra.Size()), ra.Size(), name)
	if err != nil {
		return ArchiveHour{}, err
	}
	f := r.Footer()
	return ArchiveHour{Source: f.Source, Hour: change.HourID(f.Hour), Name: name, FirstSeq: f.FirstSeq, LastSeq: f.LastSeq, Events: f.Events}, nil
}

type archiveFile struct {
	r *archive.Reader
	c io.Closer
}

func (f archiveFile) TableEvents(schemaName, table string, fn func(change.Event) error) error {
	return f.r.TableEvents(schemaName, table, fn)
}

func (f archiveFile) Close() error { return f.c.Close() }
