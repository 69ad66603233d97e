// Package archive is the codec of dbtrail's hourly archive files: one
// Parquet file holds the events one source committed in one UTC hour, as
// the index stores them, so that the hour's partition can later be dropped
// from the index. The codec does no I/O of its own: a Writer writes to an
// io.Writer, a Reader reads from an io.ReaderAt. When an hour is archived
// and when its partition is dropped is the caller's business.
//
// The format (docs/archive-format.md): the columns of change.Event, rows
// ordered by (schema_name, table_name, seq), one table per row group so a
// reader of one table skips the others by their statistics, zstd, and a
// footer that names the source, the hour, the counts per table and a digest
// of every row group. The same events always give the same bytes.
//
// Events reach the Writer in file order from index.Store.HourEvents, which
// reads the hour table by table over the index's by_table index: the
// order costs neither a sort nor temporary files, and the Writer holds one
// row group at a time.
//
// Besides the codec: the names of a source's archive files and history file
// in a store (names.go), the history file's codec (History: schema history,
// capture gaps and starts, what reindex needs beside the events), and
// two merges (merge.go): SeqOrder reads a file in the index's seq order for
// reindex, MergeFileOrder joins a stored file with events that landed
// in its hour later. And the hour file's life (hourfile.go): WriteHour
// writes it crash-safely to disk, Put and Confirm store and check it in a
// storage.Store, OpenStored reads the one stored back; Prefetch reads the
// index ahead of the writer.
package archive
