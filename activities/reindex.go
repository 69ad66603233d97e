package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
)

// reindex rebuilds an empty index from a source's archives
// (docs/archive.md): PrepareReindex checks and begins, ReindexHour restores
// one archive file per call, FinishReindex writes the history and the
// checkpoint.

// maxHistorySize bounds a history file read into memory.
const maxHistorySize = 1 << 30

// restoreStore returns the store to restore from: the one url names, else
// the worker's archive location.
func (a *Activities) restoreStore(ctx context.Context, url string) (storage.Store, error) {
	if url == "" {
		if a.Remote == nil {
			return nil, nonRetryable(payload.ErrNoArchiveLocation, errors.New("no archive location: give one (--archive-url) or configure the worker's"))
		}
		return a.Remote, nil
	}
	st, err := storage.Open(ctx, url, storage.Options{Logger: a.Log})
	if err != nil {
		return nil, fmt.Errorf("open archive location: %w", err)
	}
	return st, nil
}

// restoreLeaseWait bounds how long a restore step waits for the source's
// capture lease while an unfinished restore exists: a capture that took it
// between two steps refuses and frees it at once; an attempt of a step on a
// worker that died keeps it until the index server drops its connection
// (about two minutes, index.Lease), which the step's retries outlast.
const restoreLeaseWait = 30 * time.Second

// restoreLease takes source's capture lease for one restore step, waiting
// at most wait (index.TryLease); every step holds it and commits only while
// it does, and capture refuses while the restore is unfinished
// (index.CheckNoReindex). A lease held elsewhere is a retryable error
// wrapping index.ErrLeaseHeld.
func (a *Activities) restoreLease(ctx context.Context, source string, wait time.Duration) (*index.Lease, error) {
	l, err := a.Index.TryLease(ctx, source, wait)
	if err != nil {
		return nil, fmt.Errorf("reindex of %s: %w", source, err)
	}
	return l, nil
}

// prepareLease takes the lease for PrepareReindex. With no restore of the
// source begun, a lease held elsewhere is a running capture: CaptureRunning,
// after one try. An unfinished restore waits restoreLeaseWait like the
// other steps.
func (a *Activities) prepareLease(ctx context.Context, source string) (*index.Lease, error) {
	_, begun, err := a.Index.ReindexStatus(ctx, source)
	if err != nil {
		return nil, err
	}
	if begun {
		return a.restoreLease(ctx, source, restoreLeaseWait)
	}
	l, err := a.restoreLease(ctx, source, 0)
	if errors.Is(err, index.ErrLeaseHeld) {
		return nil, nonRetryable(ErrCaptureRunning, fmt.Errorf("capture of source %s is running against this index (%w): stop it before reindex", source, err))
	}
	return l, err
}

// PrepareReindex checks that the restore can run, then begins it: capture
// of the source must not be running, the location must hold archive files
// and a history file of the source, and the index must hold nothing of the
// source, or an unfinished restore of it from the same location (which
// then goes on). It records the restore as begun and gives the hours
// without a partition of their own one (index.Store.SplitPartitions). It
// lists the archive files, oldest hour first. It holds the source's
// capture lease throughout and records the restore under it, so capture
// refuses to start from then until FinishReindex.
func (a *Activities) PrepareReindex(ctx context.Context, in calls.PrepareReindexInput) (calls.PrepareReindexResult, error) {
	st, err := a.restoreStore(ctx, in.ArchiveURL)
	if err != nil {
		return calls.PrepareReindexResult{}, err
	}
	res := calls.PrepareReindexResult{Location: st.Location()}
	_, stop := keepAlive(ctx)
	defer stop()
	lease, err := a.prepareLease(ctx, in.Source)
	if err != nil {
		return res, err
	}
	defer lease.Release()
	if err := st.List(ctx, archive.ArchivesPrefix(in.Source), func(info storage.Info) error {
		if h, ok := archive.ParseObjectName(in.Source, info.Name); ok {
			res.Hours = append(res.Hours, calls.ReindexHourPlan{Hour: h, Object: info.Name, Size: info.Size})
		}
		return nil
	}); err != nil {
		return res, fmt.Errorf("list archives of %s in %s: %w", in.Source, st.Location(), err)
	}
	if len(res.Hours) == 0 {
		return res, nonRetryable(payload.ErrNoArchives, fmt.Errorf("no archive files of source %s in %s", in.Source, st.Location()))
	}
	if _, err := readHistory(ctx, st, in.Source); err != nil {
		return res, err
	}
	if res.Resumed, err = a.Index.BeginReindex(ctx, in.Source, st.Location(), lease); err != nil {
		var ne *index.NotEmptyError
		if errors.As(err, &ne) {
			return res, nonRetryable(payload.ErrIndexNotEmpty, err)
		}
		return res, err
	}
	if err := a.Index.SplitPartitions(ctx, change.HourID(res.Hours[0].Hour)); err != nil {
		return res, err
	}
	return res, nil
}

// readHistory reads and parses the source's history file from st. A
// missing file is NoArchives, one that does not parse BrokenArchive.
func readHistory(ctx context.Context, st storage.Store, source string) (archive.History, error) {
	name := archive.HistoryName(source)
	where := name + " in " + st.Location()
	rc, err := st.Open(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return archive.History{}, nonRetryable(payload.ErrNoArchives, fmt.Errorf("no history file %s: schema history and capture gaps of the archived hours are unknown", where))
	}
	if err != nil {
		return archive.History{}, fmt.Errorf("read %s: %w", where, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxHistorySize+1))
	if err != nil {
		return archive.History{}, fmt.Errorf("read %s: %w", where, err)
	}
	h, err := archive.ParseHistory(b, source, where)
	if err != nil {
		return archive.History{}, nonRetryable(payload.ErrBrokenArchive, err)
	}
	return h, nil
}

// ReindexHour restores one archive file into the index: it downloads it to
// the work folder (checking the sha256 the store keeps, where it keeps
// one), checks it is the source's file of that hour, and stores its events
// in seq order, packed as capture packs them, with the hour's archive
// record, in one index transaction (index.Store.ReindexHour): an hour is
// restored wholly or not at all, and once. A file that fails any check is
// BrokenArchive, naming it; nothing of it is stored. It holds the source's
// capture lease while it works (the hour commits only under it) and
// heartbeats calls.ReindexHourProgress.
func (a *Activities) ReindexHour(ctx context.Context, in calls.ReindexHourInput) (calls.ReindexHourResult, error) {
	hour := change.HourID(in.Hour)
	res := calls.ReindexHourResult{Hour: change.HourTime(hour)}
	done, found, err := a.Index.ArchiveOf(ctx, in.Source, hour)
	if err != nil {
		return res, fmt.Errorf("restore hour %s of %s: %w", res.Hour.Format(time.RFC3339), in.Source, err)
	}
	if found {
		res.Events, res.FirstSeq, res.LastSeq = done.Events, done.FirstSeq, done.LastSeq
		return res, nil
	}
	st, err := a.restoreStore(ctx, in.ArchiveURL)
	if err != nil {
		return res, err
	}
	set, stop := keepAlive(ctx)
	defer stop()
	set(calls.ReindexHourProgress{Hour: res.Hour, Step: "lease"})
	lease, err := a.restoreLease(ctx, in.Source, restoreLeaseWait)
	if err != nil {
		return res, err
	}
	defer lease.Release()
	set(calls.ReindexHourProgress{Hour: res.Hour, Step: "download"})
	where := in.Object + " in " + st.Location()
	path, d, err := a.download(ctx, st, in.Source, in.Object)
	if err != nil {
		return res, err
	}
	defer os.Remove(path)
	broken := func(err error) error { return nonRetryable(payload.ErrBrokenArchive, err) }
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	open := func() (*archive.Reader, error) {
		r, f, err := openArchiveFile(path, where)
		if f != nil {
			files = append(files, f)
		}
		return r, err
	}
	r, err := open()
	var ce *archive.CorruptError
	if errors.As(err, &ce) {
		return res, broken(err)
	}
	if err != nil {
		return res, err
	}
	ft := r.Footer()
	if ft.Source != in.Source || !ft.Hour.Equal(res.Hour) {
		return res, broken(fmt.Errorf("archive %s holds source %s hour %s", where, ft.Source, ft.Hour.Format(time.RFC3339)))
	}
	rec := change.Archive{Source: in.Source, Hour: hour, Object: in.Object, Location: st.Location(), Size: d.Size, SHA256: d.SHA256,
		Events: ft.Events, FirstSeq: ft.FirstSeq, LastSeq: ft.LastSeq, ConfirmedAt: time.Now()}
	set(calls.ReindexHourProgress{Hour: res.Hour, Step: "restore"})
	var n int64
	res.Done, err = a.Index.ReindexHour(ctx, rec, lease, func(yield func(*change.Event) error) error {
		return archive.SeqOrder(open, func(e change.Event) error {
			if n++; n%65536 == 0 {
				set(calls.ReindexHourProgress{Hour: res.Hour, Step: "restore", Events: n})
			}
			return yield(&e)
		})
	})
	if errors.As(err, &ce) {
		return res, broken(err)
	}
	if err != nil {
		return res, err
	}
	res.Events, res.FirstSeq, res.LastSeq = ft.Events, ft.FirstSeq, ft.LastSeq
	a.log(ctx).Info("archive restored", "source", in.Source, "object", in.Object, "events", ft.Events)
	return res, nil
}

// openArchiveFile opens a local archive file and a Reader of it; the
// caller closes the file.
func openArchiveFile(path, name string) (*archive.Reader, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, f, err
	}
	r, err := archive.NewReader(f, fi.Size(), name)
	return r, f, err
}

// download copies the object name to the restore folder crash-safely and
// returns its path and digest. Where the store keeps the object's sha256,
// a copy that differs from it is BrokenArchive.
func (a *Activities) download(ctx context.Context, st storage.Store, source, name string) (string, digest.Digest, error) {
	where := name + " in " + st.Location()
	info, err := st.Stat(ctx, name)
	if err != nil {
		return "", digest.Digest{}, fmt.Errorf("stat archive %s: %w", where, err)
	}
	dir := filepath.Join(a.WorkDir, source, "restore")
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return "", digest.Digest{}, err
	}
	path := filepath.Join(dir, filepath.Base(filepath.Dir(name))+"-"+filepath.Base(name))
	d, err := atomicfile.WriteHashed(path, filemode.File(), func(w io.Writer) error {
		rc, err := st.Open(ctx, name)
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(w, rc)
		return err
	})
	if err != nil {
		return "", digest.Digest{}, fmt.Errorf("download archive %s: %w", where, err)
	}
	if info.SHA256 != "" && info.SHA256 != d.SHA256 || d.Size != info.Size {
		os.Remove(path)
		return "", d, nonRetryable(payload.ErrBrokenArchive, fmt.Errorf("archive %s: %d bytes with sha256 %s read, the store says %d bytes with sha256 %s",
			where, d.Size, d.SHA256, info.Size, info.SHA256))
	}
	return path, d, nil
}

// restoredHistory keeps of h what applies at or before the checkpoint cp
// (the end of the last restored transaction): capture reads the rest again
// from the binlog, and would record it a second time.
func restoredHistory(h archive.History, cp change.Checkpoint) (archive.History, error) {
	at := cp.Pos().Coords()
	before := func(seq uint64, p binlogpos.Position) (bool, error) {
		if seq != cp.LastSeq {
			return seq < cp.LastSeq, nil
		}
		c, err := binlogpos.Compare(p, at)
		return c <= 0, err
	}
	out := archive.History{Source: h.Source}
	for _, v := range h.Schemas {
		ok, err := before(v.Seq, v.Pos().Coords())
		if err != nil {
			return out, fmt.Errorf("schema version %s.%s v%d: %w", v.Schema, v.Table, v.Version, err)
		}
		if ok {
			out.Schemas = append(out.Schemas, v)
		}
	}
	for _, g := range h.Gaps {
		c, err := binlogpos.Compare(g.From().Coords(), at)
		if err != nil {
			return out, fmt.Errorf("capture gap from %s:%d: %w", g.FromFile, g.FromPos, err)
		}
		if c <= 0 {
			out.Gaps = append(out.Gaps, g)
		}
	}
	for _, st := range h.Starts {
		ok, err := before(st.Seq, st.Position)
		if err != nil {
			return out, fmt.Errorf("capture start at %s: %w", st.Position, err)
		}
		if ok {
			out.Starts = append(out.Starts, st)
		}
	}
	return out, nil
}
