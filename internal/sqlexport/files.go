package sqlexport

import (
	"fmt"
	"io"
	"strings"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Files writes one `.sql` file of the table files at paths (an export of a
// moment: each file a table as it was then, in the order given, grouped by
// schema with CREATE DATABASE IF NOT EXISTS and USE as Snapshot does). The
// file starts with the comment lines header (each prefixed "-- "), then
// the Header; it ends with the CompleteMarker line. Each table's definition
// and CREATE TABLE come from its file's footer; every file is read to its
// end, and its rows must number its footer's row count.
func Files(w io.Writer, header []string, paths []string, opts Options) (Stats, error) {
	max, err := opts.maxBytes()
	if err != nil {
		return Stats{}, err
	}
	e := newExporter(w, max)
	for _, h := range header {
		e.printf("-- %s\n", comment(h))
	}
	e.printf("%s", Header)
	schemaName := ""
	for i, p := range paths {
		r, err := snapshot.OpenTableFile(p)
		if err != nil {
			return e.stats, err
		}
		t := r.Table()
		if i == 0 || t.Schema != schemaName {
			schemaName = t.Schema
			e.printf("\nCREATE DATABASE IF NOT EXISTS %s;\nUSE %s;\n", quoteIdent(t.Schema), quoteIdent(t.Schema))
		}
		src := fileRows(r)
		f := r.Footer()
		src.note = fmt.Sprintf("%d rows, fingerprint %s, at binlog %s:%d seq %d", f.Rows, f.Fingerprint,
			f.Position.File, f.Position.Pos, f.Position.Seq)
		err = e.table(src)
		r.Close()
		if err != nil {
			return e.stats, fmt.Errorf("%s: %w", strings.TrimSuffix(p, ".parquet"), err)
		}
	}
	return e.finish()
}
