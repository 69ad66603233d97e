// Package moment is the one seam for "a table at a position": every reader
// of a table at a moment T — `export sql`/`parquet --at`, `views --at`,
// `verify`, a refresh's rewrite, a changes export and a row's history —
// goes through it (see docs/time-travel.md).
//
// A moment is rebuilt in three steps, each a separate piece:
//
//  1. The cut (when.Parse, Bounds, Decide, Resolve). T is a time, a seq, a
//     binlog file:pos, a GTID or "latest". The cut is the last transaction
//     at or before T, found in the index's chunk headers; it is always a
//     transaction boundary (every event of one transaction shares its
//     commit time and end position); Past.Lookup extends the lookups over
//     the archived hours. Bounds and Decide are pure functions
//     of the index's facts (checkpoint, capture starts, gaps) and of the
//     transaction the lookup found; they refuse a T after the checkpoint
//     ("not captured yet"), inside a capture gap, or naming nothing.
//  2. The plan (ChooseBase, MakePlan; PlanAt reads their inputs). Every
//     table starts from the newest snapshot at or before the cut (its table
//     file and chain), on the cut's side of every capture gap, and folds
//     the events after it up to the cut. A cut before the oldest snapshot,
//     a table created after that snapshot, or one whose shape changed
//     between it and the cut is refused with the reason. Plans are pure
//     values, decided before anything is read, and recorded in workflow
//     histories.
//  3. The rebuild (Rebuilder, Table). A table's window of events is read
//     from an Events source and folded with its snapshot's files in a fold
//     engine (DuckDB, bounded memory, spilling to disk): rows streamed
//     (Table.Rows) or a table file written (Table.Write).
//
// Two plug-in points are interfaces, so that sources added later do not
// change the rest:
//
//   - Events: where row changes come from. IndexEvents reads the index;
//     ArchiveEvents reads hourly archive files through an ArchiveStore;
//     Merge reads several by seq, each event once.
//   - Catalog: where snapshots are. LocalCatalog lists a source folder's
//     manifests; MirrorCatalog adds the snapshots on object storage and
//     downloads one on Open.
//
// Past builds both, and the cut lookups over the archived hours, for one
// source in one place: every reader of the past uses it.
package moment
