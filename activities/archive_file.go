package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// archivedFile is one hour's archive file, written and confirmed.
type archivedFile struct {
	path              string
	d                 digest.Digest
	events            int64 // in the file
	indexEvents       int64 // of them, from the index
	firstSeq, lastSeq uint64
}

// archiveFile writes the hour's file, records it as not confirmed, uploads
// and confirms it.
func (a *Activities) archiveFile(ctx context.Context, source string, hour uint32, set func(any), log *slog.Logger) (archivedFile, error) {
	name := archive.ObjectName(source, change.HourTime(hour))
	stored, closeStored, err := a.storedArchive(ctx, source, hour, name)
	if err != nil {
		return archivedFile{}, err
	}
	step(set, log, hour, "write", 0)
	f, err := a.writeHourFile(ctx, source, hour, stored, set, log)
	closeStored()
	if err != nil {
		return f, err
	}
	if f.events == 0 {
		return f, nil // nothing in the index, nothing stored: nothing to keep
	}
	rec := change.Archive{Source: source, Hour: hour, Object: name, Location: a.Remote.Location(), Size: f.d.Size,
		SHA256: f.d.SHA256, Events: f.events, FirstSeq: f.firstSeq, LastSeq: f.lastSeq}
	step(set, log, hour, "record", f.events)
	if err := a.Index.RecordArchive(ctx, rec); err != nil {
		return f, err
	}
	step(set, log, hour, "upload", f.events)
	if err := a.putFile(ctx, name, f); err != nil {
		return f, err
	}
	step(set, log, hour, "confirm", f.events)
	if err := a.confirmObject(ctx, source, hour, name, f); err != nil {
		return f, err
	}
	ok, err := a.Index.ConfirmArchive(ctx, source, hour, f.d.SHA256, time.Now())
	if err != nil {
		return f, err
	}
	if !ok {
		return f, fmt.Errorf("archive %s: its record names other content now (another run?)", name)
	}
	return f, nil
}

// storedArchive opens the archive file already stored for the hour, if any,
// as a Scan of its events (nil when there is none). A file that fails its
// checks is BrokenArchive: it is neither overwritten nor is the hour
// dropped. A recorded file that is missing from the store is BrokenArchive
// too: its events are no longer anywhere.
func (a *Activities) storedArchive(ctx context.Context, source string, hour uint32, name string) (archive.Scan, func(), error) {
	none := func() {}
	where := name + " in " + a.Remote.Location()
	ra, err := a.Remote.OpenReaderAt(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		rec, found, err := a.Index.ArchiveOf(ctx, source, hour)
		if err != nil {
			return nil, none, fmt.Errorf("archive %s: %w", where, err)
		}
		if found && rec.Confirmed() && !rec.DroppedAt.IsZero() {
			return nil, none, nonRetryable(ErrBrokenArchive, fmt.Errorf(
				"archive %s, recorded with %d events confirmed at %s, is missing: the events it held are in no other place; the hour is not rewritten",
				where, rec.Events, rec.ConfirmedAt.Format(time.RFC3339)))
		}
		return nil, none, nil
	}
	if err != nil {
		return nil, none, fmt.Errorf("open archive %s: %w", where, err)
	}
	r, err := archive.NewReader(ra, ra.Size(), where)
	var ce *archive.CorruptError
	if errors.As(err, &ce) {
		ra.Close()
		return nil, none, nonRetryable(ErrBrokenArchive, fmt.Errorf("stored %w; it is neither rewritten nor is the hour dropped", err))
	}
	if err != nil {
		ra.Close()
		return nil, none, err
	}
	if ft := r.Footer(); ft.Source != source || !ft.Hour.Equal(change.HourTime(hour)) {
		ra.Close()
		return nil, none, nonRetryable(ErrBrokenArchive, fmt.Errorf("archive %s holds source %s hour %s", where, ft.Source, ft.Hour.Format(time.RFC3339)))
	}
	return func(fn func(change.Event) error) error {
		err := r.Events(fn)
		if errors.As(err, &ce) {
			return nonRetryable(ErrBrokenArchive, fmt.Errorf("stored %w; it is neither rewritten nor is the hour dropped", err))
		}
		return err
	}, func() { ra.Close() }, nil
}

// writeHourFile writes the hour's archive file crash-safely in the work
// folder: the stored file's events (if any) joined with the index's, each
// once.
func (a *Activities) writeHourFile(ctx context.Context, source string, hour uint32, stored archive.Scan,
	set func(any), log *slog.Logger) (archivedFile, error) {
	f := archivedFile{path: filepath.Join(a.archiveWorkDir(source), index.PartitionName(hour)+".parquet")}
	if err := os.MkdirAll(a.archiveWorkDir(source), 0o750); err != nil {
		return f, err
	}
	fromIndex := prefetch(func(fn func(change.Event) error) error {
		return a.Index.HourEvents(ctx, source, hour, func(e change.Event) error {
			f.indexEvents++
			return fn(e)
		})
	})
	events := fromIndex
	if stored != nil {
		events = func(fn func(change.Event) error) error { return archive.MergeFileOrder(stored, fromIndex, fn) }
	}
	var res archive.WriteResult
	h := sha256.New()
	err := atomicfile.Write(f.path, 0o640, func(w io.Writer) error {
		aw, err := archive.NewWriter(io.MultiWriter(w, h), source, change.HourTime(hour), archive.WriterOptions{ZstdLevel: 1})
		if err != nil {
			return err
		}
		if err := events(func(e change.Event) error {
			if err := aw.Append(&e); err != nil {
				return err
			}
			if f.events++; f.events%65536 == 0 {
				step(set, log, hour, "write", f.events)
			}
			return nil
		}); err != nil {
			return err
		}
		res, err = aw.Close()
		return err
	})
	var ee *archive.EventError
	var ce *archive.ConflictError
	switch {
	case errors.As(err, &ce):
		return f, nonRetryable(ErrArchiveConflict, fmt.Errorf("archive hour %s of %s: %w", index.PartitionName(hour), source, err))
	case errors.As(err, &ee):
		return f, badInput(fmt.Errorf("archive hour %s of %s: %w", index.PartitionName(hour), source, err))
	case err != nil:
		return f, fmt.Errorf("archive hour %s of %s: %w", index.PartitionName(hour), source, err)
	}
	f.d = digest.Digest{SHA256: hex.EncodeToString(h.Sum(nil)), Size: res.Bytes}
	f.firstSeq, f.lastSeq = res.Footer.FirstSeq, res.Footer.LastSeq
	return f, nil
}

// putFile uploads the hour file to name; the store refuses content that
// is not f.d.
func (a *Activities) putFile(ctx context.Context, name string, f archivedFile) error {
	file, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := a.Remote.Put(ctx, name, file, f.d); err != nil {
		return fmt.Errorf("upload archive %s to %s: %w", name, a.Remote.Location(), err)
	}
	return nil
}

// confirmObject checks that the stored object name is the file f: its size
// and sha256 (read back and hashed where the store does not record it),
// and its footer: source, hour and event count.
func (a *Activities) confirmObject(ctx context.Context, source string, hour uint32, name string, f archivedFile) error {
	where := name + " in " + a.Remote.Location()
	fail := func(err error) error { return fmt.Errorf("confirm archive %s: %w", where, err) }
	info, err := a.Remote.Stat(ctx, name)
	if err != nil {
		return fail(err)
	}
	if info.Size != f.d.Size {
		return fail(fmt.Errorf("stored object is %d bytes, the file %d", info.Size, f.d.Size))
	}
	sum := info.SHA256
	if sum == "" {
		if sum, err = hashObject(ctx, a.Remote, name); err != nil {
			return fail(err)
		}
	}
	if sum != f.d.SHA256 {
		return fail(fmt.Errorf("stored object has sha256 %s, the file %s", sum, f.d.SHA256))
	}
	ra, err := a.Remote.OpenReaderAt(ctx, name)
	if err != nil {
		return fail(err)
	}
	defer ra.Close()
	r, err := archive.NewReader(ra, ra.Size(), where)
	if err != nil {
		return fail(err)
	}
	ft := r.Footer()
	if ft.Source != source || !ft.Hour.Equal(change.HourTime(hour)) || ft.Events != f.events {
		return fail(fmt.Errorf("footer says source %s hour %s %d events, want %s %s %d", ft.Source, ft.Hour.Format(time.RFC3339),
			ft.Events, source, change.HourTime(hour).Format(time.RFC3339), f.events))
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

// prefetchBatch is how many events prefetch hands over at once.
const prefetchBatch = 4096

// prefetch runs scan in a goroutine of its own, a few batches ahead of
// its consumer: reading the index (the server's work and the unpacking of
// chunks) overlaps with writing the file. The events must not alias
// memory scan reuses (HourEvents' do not). The returned Scan may be run
// once; when its fn fails, the goroutine is stopped before it returns.
func prefetch(scan archive.Scan) archive.Scan {
	return func(fn func(change.Event) error) error {
		batches := make(chan []change.Event, 4)
		done := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			defer close(batches)
			batch := make([]change.Event, 0, prefetchBatch)
			send := func() bool {
				select {
				case batches <- batch:
					batch = make([]change.Event, 0, prefetchBatch)
					return true
				case <-done:
					return false
				}
			}
			err := scan(func(e change.Event) error {
				if batch = append(batch, e); len(batch) == prefetchBatch && !send() {
					return errPrefetchStopped
				}
				return nil
			})
			if err == nil && len(batch) > 0 {
				send()
			}
			errc <- err
		}()
		for b := range batches {
			for _, e := range b {
				if err := fn(e); err != nil {
					close(done)
					for range batches { // let the goroutine end
					}
					return err
				}
			}
		}
		if err := <-errc; err != nil && !errors.Is(err, errPrefetchStopped) {
			return err
		}
		return nil
	}
}

// errPrefetchStopped ends a prefetched scan whose consumer stopped.
var errPrefetchStopped = errors.New("prefetch stopped")
