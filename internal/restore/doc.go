// Package restore is the pure part of loading tables rebuilt at a moment
// into a live MySQL/MariaDB server (the Restore workflow, see
// docs/restore.md): the names a load writes under, the bookkeeping table
// that carries each table's checkpoint, the chunk size that follows
// --chunk-time, and the throttle's decision to pause and why, which do
// no I/O: activities read the signals and execute the decisions. And
// the staged table (Staged): a table rebuilt at the moment written to
// local files sorted by its key (WriteStaged), with the row group index
// that lets a load enter it at a key (OpenRange) and split it into key
// ranges loaded at once (Split).
//
// The load follows the chunked backfill pattern: one chunk is one
// transaction in the target that inserts the chunk's rows and moves the
// table's checkpoint (rows loaded, last key) in the bookkeeping table, only
// if the checkpoint still says what the loader read, so a commit and its
// checkpoint never disagree and two loaders never load the same rows.
package restore
