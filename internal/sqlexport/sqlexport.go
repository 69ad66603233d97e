// Package sqlexport writes a `.sql` backup regenerated from the rows of a
// snapshot (see docs/types.md for its literals): the stored CREATE TABLE plus
// multi-row INSERT statements that the mysql/mariadb client loads.
//
// A file is:
//
//	-- comments naming the snapshot, source and binlog position
//	SET NAMES utf8mb4; SET time_zone='+00:00'; SET SESSION sql_mode=...;
//	SET FOREIGN_KEY_CHECKS=0; SET UNIQUE_CHECKS=0;
//	CREATE DATABASE IF NOT EXISTS `db`; USE `db`;     (Snapshot only, per schema)
//	DROP TABLE IF EXISTS `t`; <stored CREATE TABLE>;
//	INSERT INTO `t` (`a`,`b`) VALUES (...),(...);      one line per statement
//	-- dbtrail export complete: ...                     the last line
//
// Values are exact for every type (see appendLiteral). Every INSERT is at
// most Options.MaxStatementBytes long including its ';', except a statement
// of a single row that is longer by itself (counted in Stats.Oversize): the
// loading client and server need a max_allowed_packet at least
// Stats.LargestStatement.
//
// Snapshot exports every table as it is at the snapshot (see
// docs/snapshot-format.md): a table whose chain holds no changes (EmptyChain) from its table
// file alone; any other from its table file minus the rows its .posdel files
// name plus the newest version of every key in its .upserts files, read with
// internal/fold (DuckDB, spilling to a scratch folder under Options.TempDir).
// A file whose digest differs from the manifest is never read.
package sqlexport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// DefaultMaxStatementBytes bounds an INSERT statement when Options leave it
// zero: 1 MiB, far below MariaDB's and MySQL's default max_allowed_packet of
// 16 MiB (64 MiB on MySQL 8), so a default client and server load the file.
const DefaultMaxStatementBytes = 1 << 20

// MinStatementBytes is the smallest MaxStatementBytes accepted.
const MinStatementBytes = 1024

// Header is the session setup at the start of every export: UTF-8 text,
// TIMESTAMP values read in UTC (as they are stored in a snapshot), a sql_mode
// that loads zero dates, zero in AUTO_INCREMENT columns and ENUM index 0, that
// keeps backslash escapes and refuses a missing storage engine, and no
// foreign-key or unique checks while loading.
const Header = "SET NAMES utf8mb4;\n" +
	"SET time_zone='+00:00';\n" +
	"SET SESSION sql_mode='NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION';\n" +
	"SET FOREIGN_KEY_CHECKS=0;\n" +
	"SET UNIQUE_CHECKS=0;\n"

// CompleteMarker starts the last line of every complete export; a file
// without it was cut short.
const CompleteMarker = "-- dbtrail export complete:"

// Options tune an export. The zero value is the default.
type Options struct {
	// MaxStatementBytes bounds each INSERT statement, ';' included; 0 means
	// DefaultMaxStatementBytes, and less than MinStatementBytes is an error.
	MaxStatementBytes int
	// Tables limits Snapshot to these tables, each "schema.table" as the
	// manifest names it; empty means every table. Table ignores it.
	Tables []string
	// TempDir is where Snapshot makes (and afterwards removes) a scratch
	// folder for reading tables with a chain: DuckDB's spill files, which
	// grow with the chain, not with the table. Empty means os.TempDir().
	// Table ignores it.
	TempDir string
}

func (o Options) maxBytes() (int, error) {
	switch {
	case o.MaxStatementBytes == 0:
		return DefaultMaxStatementBytes, nil
	case o.MaxStatementBytes < MinStatementBytes:
		return 0, fmt.Errorf("max statement bytes %d: want at least %d", o.MaxStatementBytes, MinStatementBytes)
	}
	return o.MaxStatementBytes, nil
}

// Stats describe a finished export.
type Stats struct {
	Tables           int
	Rows             int64
	Statements       int   // INSERT statements
	Bytes            int64 // bytes written
	LargestStatement int   // bytes of the longest INSERT, ';' included
	// Oversize counts INSERTs of a single row longer than MaxStatementBytes.
	Oversize int
}

// EmptyChain reports whether mt's chain holds no changes: it is empty (a
// table always written in full) or exactly the empty chain start pair
// <schema>/<table>.000000.posdel and .000000.upserts (which
// snapshot.WriteEmptyChainStart writes with zero rows), so that its table
// file alone is the table at the snapshot.
func EmptyChain(mt snapshot.ManifestTable) bool {
	for _, rel := range mt.Chain {
		start := false
		for _, suffix := range []string{"posdel", "upserts"} {
			if p, err := snapshot.ChainFile(mt.Schema, mt.Table, "000000", suffix); err == nil && p == rel {
				start = true
			}
		}
		if !start {
			return false
		}
	}
	return true
}

// SelectTables returns the manifest's tables named in names ("schema.table",
// matched exactly), or all of them when names is empty, sorted by schema then
// table. A name the manifest does not hold is an error.
func SelectTables(m snapshot.Manifest, names []string) ([]snapshot.ManifestTable, error) {
	var out []snapshot.ManifestTable
	if len(names) == 0 {
		out = append(out, m.Tables...)
	} else {
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			found := false
			for _, mt := range m.Tables {
				if mt.Schema+"."+mt.Table == n {
					out, found = append(out, mt), true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("snapshot %s has no table %q (name a table as schema.table)", m.SnapshotID, n)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Schema != out[j].Schema {
			return out[i].Schema < out[j].Schema
		}
		return out[i].Table < out[j].Table
	})
	return out, nil
}

// Table writes a complete `.sql` file of the one table file r reads, as it
// is (a table of a snapshot whose chain holds changes is exported at its
// snapshot by Snapshot with Options.Tables): comments, the Header, DROP
// TABLE IF EXISTS, the CREATE TABLE stored in the table file's footer, the
// rows as INSERT statements and the CompleteMarker line. Names are not
// qualified with a schema: load it into a database chosen by the client
// (`mariadb db < file`). It reads r to its end and does not close it.
// Errors name the table and, for a value, the row (1-based) and column.
func Table(w io.Writer, r *snapshot.TableReader, opts Options) (Stats, error) {
	max, err := opts.maxBytes()
	if err != nil {
		return Stats{}, err
	}
	e := newExporter(w, max)
	f := r.Footer()
	e.printf("-- dbtrail export of table %s from snapshot %s of source %s\n", comment(r.Table().QualifiedName()), comment(f.SnapshotID), comment(f.Source))
	e.printf("-- binlog position %s:%d seq %d\n", comment(f.Position.File), f.Position.Pos, f.Position.Seq)
	e.printf("%s", Header)
	if err := e.table(fileRows(r)); err != nil {
		return e.stats, err
	}
	return e.finish()
}

// Snapshot is SnapshotContext without a context.
func Snapshot(w io.Writer, snap *snapshot.Snapshot, opts Options) (Stats, error) {
	return SnapshotContext(context.Background(), w, snap, opts)
}

// SnapshotContext writes one `.sql` file of every table of snap (or of
// opts.Tables) as it is at the snapshot (see the package comment), grouped
// by schema, each group starting with CREATE DATABASE IF NOT EXISTS and USE.
// Each table's files are checked against the manifest just before the table
// is read: a file whose digest differs refuses the table with a
// *snapshot.DigestError, possibly after earlier tables were written (a file
// without the CompleteMarker line is incomplete). ctx bounds reading chains.
func SnapshotContext(ctx context.Context, w io.Writer, snap *snapshot.Snapshot, opts Options) (Stats, error) {
	max, err := opts.maxBytes()
	if err != nil {
		return Stats{}, err
	}
	tables, err := SelectTables(snap.Manifest, opts.Tables)
	if err != nil {
		return Stats{}, err
	}
	chains := &chainReader{dir: opts.TempDir}
	defer chains.Close()
	m := snap.Manifest
	e := newExporter(w, max)
	e.printf("-- dbtrail export of snapshot %s of source %s: %d tables\n", comment(m.SnapshotID), comment(m.Source), len(tables))
	e.printf("-- binlog position %s:%d seq %d\n", comment(m.Position.File), m.Position.Pos, m.Position.Seq)
	e.printf("%s", Header)
	schemaName := ""
	for i, mt := range tables {
		if i == 0 || mt.Schema != schemaName {
			schemaName = mt.Schema
			e.printf("\nCREATE DATABASE IF NOT EXISTS %s;\nUSE %s;\n", quoteIdent(mt.Schema), quoteIdent(mt.Schema))
		}
		if err := e.snapshotTable(ctx, snap, mt, chains); err != nil {
			return e.stats, err
		}
	}
	if err := chains.Close(); err != nil {
		return e.stats, err
	}
	return e.finish()
}

// exporter writes through a buffer, counting bytes; the first write error
// sticks.
type exporter struct {
	bw    *bufio.Writer
	cw    *countingWriter
	max   int
	stats Stats
	stmt  []byte // the INSERT being built
	row   []byte // the row being rendered
}

func newExporter(w io.Writer, max int) *exporter {
	cw := &countingWriter{w: w}
	return &exporter{bw: bufio.NewWriterSize(cw, 256<<10), cw: cw, max: max}
}

func (e *exporter) printf(format string, args ...any) { fmt.Fprintf(e.bw, format, args...) }

// finish writes the CompleteMarker line and flushes.
func (e *exporter) finish() (Stats, error) {
	e.printf("\n%s %d tables, %d rows, %d INSERT statements\n", CompleteMarker, e.stats.Tables, e.stats.Rows, e.stats.Statements)
	if err := e.bw.Flush(); err != nil {
		return e.stats, fmt.Errorf("write export: %w", err)
	}
	e.stats.Bytes = e.cw.n
	return e.stats, e.cw.err
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("write export: %w", err)
	}
	return n, err
}
