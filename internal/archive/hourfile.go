package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// HourFile is one hour's archive file on disk, as WriteHour wrote it.
type HourFile struct {
	Path              string
	Source            string
	Hour              time.Time
	Digest            digest.Digest
	Events            int64
	FirstSeq, LastSeq uint64
}

// progressEvery is how many events WriteHour writes between progress calls.
const progressEvery = 65536

// WriteHour writes the archive file of source's hour at path crash-safely
// (atomicfile, in a folder it makes): the events of events, in file order,
// through a Writer at zstd level 1. progress, when not nil, gets the count
// every 65536 events. An event the Writer refuses is an *EventError, and
// a *ConflictError of MergeFileOrder comes through as events returns it;
// on any error nothing is left at path.
func WriteHour(path, source string, hour time.Time, events Scan, progress func(events int64)) (HourFile, error) {
	f := HourFile{Path: path, Source: source, Hour: hour}
	if err := os.MkdirAll(filepath.Dir(path), filemode.Dir()); err != nil {
		return f, err
	}
	var res WriteResult
	d, err := atomicfile.WriteHashed(path, filemode.File(), func(w io.Writer) error {
		aw, err := NewWriter(w, source, hour, WriterOptions{ZstdLevel: 1})
		if err != nil {
			return err
		}
		if err := events(func(e change.Event) error {
			if err := aw.Append(&e); err != nil {
				return err
			}
			if f.Events++; f.Events%progressEvery == 0 && progress != nil {
				progress(f.Events)
			}
			return nil
		}); err != nil {
			return err
		}
		res, err = aw.Close()
		return err
	})
	if err != nil {
		return f, err
	}
	f.Digest = d
	f.FirstSeq, f.LastSeq = res.Footer.FirstSeq, res.Footer.LastSeq
	return f, nil
}

// OpenStored opens the archive file name in st, which should hold source's
// hour, as a Scan of its events and what closes it; a Scan of nil when st
// has no such object. A file that is damaged or holds another source or
// hour is a *CorruptError, when opened or, for a damaged row group, when
// scanned.
func OpenStored(ctx context.Context, st storage.Store, name, source string, hour time.Time) (Scan, func(), error) {
	none := func() {}
	where := name + " in " + st.Location()
	ra, err := st.OpenReaderAt(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, none, nil
	}
	if err != nil {
		return nil, none, fmt.Errorf("open archive %s: %w", where, err)
	}
	r, err := NewReader(ra, ra.Size(), where)
	if err == nil {
		if ft := r.Footer(); ft.Source != source || !ft.Hour.Equal(hour) {
			err = &CorruptError{File: where, Err: fmt.Errorf("holds source %s hour %s, not %s %s", ft.Source,
				ft.Hour.Format(time.RFC3339), source, hour.Format(time.RFC3339))}
		}
	}
	if err != nil {
		ra.Close()
		return nil, none, err
	}
	return r.Events, func() { ra.Close() }, nil
}

// Put uploads f to name in st; the store refuses content that is not
// f.Digest.
func Put(ctx context.Context, st storage.Store, name string, f HourFile) error {
	file, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := st.Put(ctx, name, file, f.Digest); err != nil {
		return fmt.Errorf("upload archive %s to %s: %w", name, st.Location(), err)
	}
	return nil
}

// Confirm checks that the object name in st is f: its size and sha256
// (read back and hashed where the store does not record it), and its
// footer: source, hour and event count.
func Confirm(ctx context.Context, st storage.Store, name string, f HourFile) error {
	where := name + " in " + st.Location()
	fail := func(err error) error { return fmt.Errorf("confirm archive %s: %w", where, err) }
	info, err := st.Stat(ctx, name)
	if err != nil {
		return fail(err)
	}
	if info.Size != f.Digest.Size {
		return fail(fmt.Errorf("stored object is %d bytes, the file %d", info.Size, f.Digest.Size))
	}
	sum := info.SHA256
	if sum == "" {
		if sum, err = hashObject(ctx, st, name); err != nil {
			return fail(err)
		}
	}
	if sum != f.Digest.SHA256 {
		return fail(fmt.Errorf("stored object has sha256 %s, the file %s", sum, f.Digest.SHA256))
	}
	ra, err := st.OpenReaderAt(ctx, name)
	if err != nil {
		return fail(err)
	}
	defer ra.Close()
	r, err := NewReader(ra, ra.Size(), where)
	if err != nil {
		return fail(err)
	}
	ft := r.Footer()
	if ft.Source != f.Source || !ft.Hour.Equal(f.Hour) || ft.Events != f.Events {
		return fail(fmt.Errorf("footer says source %s hour %s %d events, want %s %s %d", ft.Source, ft.Hour.Format(time.RFC3339),
			ft.Events, f.Source, f.Hour.Format(time.RFC3339), f.Events))
	}
	return nil
}

// hashObject returns the sha256 of a stored object, read back whole.
func hashObject(ctx context.Context, st storage.Store, name string) (string, error) {
	rc, err := st.Open(ctx, name)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	d, err := digest.Of(rc)
	return d.SHA256, err
}
