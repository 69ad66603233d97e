// Package restore is loading tables rebuilt at a moment into a live
// MySQL/MariaDB server (the Restore workflow, see docs/restore.md), I/O
// included: the checks that refuse a restore before it writes
// (Target.Prepare: privileges, non-empty targets, --no-binlog), the
// bookkeeping tables that carry each table's and each part's checkpoint,
// the loader (Load.Run: chunks of INSERTs or LOAD DATA, each one
// transaction with its checkpoint move), the throttle's signals (read
// from the target and replicas; internal/throttle decides on them), the
// verification and the --replace swap (Target.Verify), and a drill's drop
// (Target.DropDrill). The names a load writes under are pure functions
// (the chunk size that follows --chunk-time is internal/throttle's). And
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
//
// Errors a retry cannot cure carry a kind (Error, KindOf); the Restore
// workflow's activities pass it on as the non-retryable error's type.
package restore
