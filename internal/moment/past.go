package moment

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/when"
)

// Past is one source's past as every reader of it sees it: the index for
// the hours it holds, the archive location's hour files for the hours it
// dropped, and the snapshots in the source folder and on the object store.
// It is built in one place for every reader (the Export and Restore
// workflows, a refresh's window, `views --at`, `verify --at`, `history`,
// `export changes`, the benchmarks), so none of them can read the index
// alone and answer a moment inside an archived hour wrongly.
type Past struct {
	Source string
	Index  Store
	// SourceDir is the source's local folder (<backup-dir>/<source>).
	SourceDir string
	// Archive is the archive location (--archive-url): hour files and
	// snapshots on object storage. Nil: the index and the local folder
	// only; a moment inside an archived hour is then refused, naming it.
	Archive storage.Store
	// Free, when set, measures SourceDir's free space before a snapshot
	// only on the store is downloaded into it (MirrorCatalog.Free): too
	// little refuses the download, a *disk.NoSpaceError, before anything
	// is written.
	Free disk.Probe
	Log  *slog.Logger
}

// Events is the source's row changes: the index merged by seq with the
// confirmed archived hours (each event once; every hour file's footer
// checked against the archives record, every row group against its digest
// when read).
func (p Past) Events() Events {
	ix := IndexEvents{Store: p.Index}
	return Merge(ix, ArchiveEvents{Store: p.archiveFiles()})
}

// Lookup is the index's transaction lookups extended over the archived
// hours: a time, seq, position or GTID inside an archived hour finds its
// transaction in the hour's file; an hour that cannot be read refuses the
// moment, naming the hour and the cause.
func (p Past) Lookup() Index {
	return archivedLookup{Store: p.Index, hours: p.archiveFiles()}
}

// Catalog is the source's snapshots: the local folder and, with an archive
// location, the snapshots on the store (one only there is downloaded and
// digest-checked into the source folder when a rebuild starts from it).
func (p Past) Catalog(ctx context.Context) (Catalog, error) {
	local := LocalCatalog{SourceDir: p.SourceDir}
	if p.Archive == nil {
		return local, nil
	}
	log := p.Log
	if log == nil {
		log = slog.Default()
	}
	m, err := remote.New(p.Archive, p.Source, p.SourceDir, log)
	if err != nil {
		return nil, fmt.Errorf("snapshots of %s on %s: %w", p.Source, p.Archive.Location(), err)
	}
	return MirrorCatalog{Local: local, Mirror: m, Free: p.Free}, nil
}

// Plan resolves at and plans the rebuild of sel at it (PlanAt) over the
// whole past: cut lookups over the archives, the base snapshot local or on
// the store.
func (p Past) Plan(ctx context.Context, at when.At, sel Selection) (Plan, Catalog, error) {
	cat, err := p.Catalog(ctx)
	if err != nil {
		return Plan{}, nil, err
	}
	plan, err := PlanAt(ctx, p.Lookup(), p.Index, cat, p.Source, at, sel)
	return plan, cat, err
}

// ResolveRange resolves the range [from, until) over the whole past.
func (p Past) ResolveRange(ctx context.Context, from, until when.At) (Range, error) {
	lk := p.Lookup()
	f, err := ReadFacts(ctx, lk, p.Source)
	if err != nil {
		return Range{}, err
	}
	return ResolveRange(ctx, lk, f, from, until)
}

// Rebuilder reads plan's tables from cat (Plan's) and the whole past's
// events, folded in eng.
func (p Past) Rebuilder(eng *fold.Engine, cat Catalog) Rebuilder {
	return Rebuilder{Source: p.Source, Engine: eng, Events: p.Events(), Catalog: cat}
}

// ChangeCounts counts the events of each table in (after, upto]: the
// index's, and those of every archived hour the index no longer holds
// whole (from the hour files: a row group wholly inside the range counts
// its rows from the footer, one straddling an end is read). An hour whose
// late events are in the index again besides its file may count those
// twice: the counts decide how a table is folded (never whether its
// events are read), and none is ever 0 for a table with events.
func (p Past) ChangeCounts(ctx context.Context, after, upto uint64) (map[TableKey]int64, error) {
	counts, err := p.Index.ChangeCounts(ctx, p.Source, after, upto)
	if err != nil {
		return nil, err
	}
	out := map[TableKey]int64{}
	for k, n := range counts {
		out[TableKey{Schema: k[0], Table: k[1]}] = n
	}
	files := p.archiveFiles()
	hours, err := files.Hours(ctx, p.Source, after, upto)
	if err != nil {
		return nil, fmt.Errorf("archived hours of %s: %w", p.Source, err)
	}
	s := newHourSearch(ctx, files)
	defer s.close()
	for _, h := range hours {
		held, err := p.Index.CountHour(ctx, p.Source, h.Hour)
		if err != nil {
			return nil, err
		}
		if held >= h.Events {
			continue // the index holds the whole hour
		}
		if err := s.countTables(h, after, upto, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}
