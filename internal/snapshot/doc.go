// Package snapshot writes, publishes and reads dbtrail's Parquet snapshots
// (see docs/snapshot-format.md, docs/types.md and docs/verify.md).
//
// Layout under a source folder:
//
//	<source dir>/snapshots/<id>/manifest.json       written last; lists every file with sha256 and size
//	<source dir>/snapshots/<id>/<schema>/<table>.parquet
//	<source dir>/snapshots/<id>/<schema>/<table>.000000.posdel|upserts
//	<source dir>/.staging/<id>/                      a snapshot being built; never read
//	<source dir>/current -> snapshots/<id>           swapped by one rename per publish
//
// Values: a TableWriter takes one row at a time in the SQL text form that
// `SELECT` returns through database/sql (the input of rowimage.AppendSQLValue)
// or as a canonical JSON row image, and stores each value in the Parquet type
// ArrowSchema gives its column. The stored value is the canonical value of
// internal/rowimage decoded: numbers as typed integers/floats, JSON strings as
// their text, base64 strings (binary columns) as their bytes. A TableReader
// gives rows back in the SQL text form, so that rowimage.AppendSQLValue of a
// value read back equals the canonical value of the value written.
//
// Integrity: every file of a published snapshot is listed in manifest.json
// with its sha256 and size, and OpenTable refuses a file whose digest does not
// match. Every table file carries its fingerprint (row count and
// order-independent sum of RowHash) in its footer.
package snapshot
