package snapshot

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// Column names of the chain files (see docs/snapshot-format.md).
const (
	ColRow = "row"         // .posdel: row number in the table file
	ColPK  = "bintrail_pk" // .upserts: the key as one string (rowimage.Key)
	ColOp  = "bintrail_op" // .upserts: OpUpsert or OpDelete
)

// Values of ColOp.
const (
	OpUpsert = "u"
	OpDelete = "d"
)

// Kinds of a manifest table.
const (
	// KindDelta: a table file plus a chain of .posdel/.upserts pairs.
	KindDelta = "delta"
	// KindFull: a table always written in full (FullOnly); no chain.
	KindFull = "full"
)

// ErrFullOnly is returned for chain files of a table that is always written
// in full.
var ErrFullOnly = errors.New("table is always written in full (a reserved column name, or no primary or unique key)")

// FullOnly reports whether t must always be written in full, without a
// chain: it has a column named bintrail_pk, bintrail_op, filename or
// file_row_number (compared case-insensitively, as MySQL and DuckDB compare
// column names), or it has no primary or unique key (schema.KeyRow: its rows
// need not be unique, and a chain keeps one version per key).
func FullOnly(t *schema.Table) bool { return FullOnlyReason(t) != "" }

// ReservedColumns are the column names a chain's files and its readers use
// besides the table's: the .upserts' key and op, and DuckDB's read_parquet
// filename and file_row_number. A table with one of them is FullOnly.
var ReservedColumns = []string{ColPK, ColOp, "filename", "file_row_number"}

// IsReservedColumn reports whether name is one of ReservedColumns, compared
// case-insensitively (as MySQL and DuckDB compare column names).
func IsReservedColumn(name string) bool {
	for _, r := range ReservedColumns {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	return false
}

// FullOnlyReason says why t is FullOnly, or "".
func FullOnlyReason(t *schema.Table) string {
	for _, c := range t.Columns {
		if IsReservedColumn(c.Name) {
			return "it has a column named " + c.Name
		}
	}
	if t.KeyKind == schema.KeyRow {
		return "it has no primary or unique key (rows need not be unique)"
	}
	return ""
}

// checkName refuses a schema or table name that is not one safe path
// component.
func checkName(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("%s name %q cannot be a file name", what, name)
	}
	return nil
}

// TableFile returns the snapshot-relative path of a table file,
// "<schema>/<table>.parquet".
func TableFile(schemaName, table string) (string, error) {
	if err := checkName("schema", schemaName); err != nil {
		return "", err
	}
	if err := checkName("table", table); err != nil {
		return "", err
	}
	return schemaName + "/" + table + ".parquet", nil
}

// ChainFile returns the snapshot-relative path of a chain file,
// "<schema>/<table>.<entry>.<suffix>", e.g. entry "000001" or
// "000000-000014" and suffix "posdel" or "upserts".
func ChainFile(schemaName, table, entry, suffix string) (string, error) {
	if err := checkName("schema", schemaName); err != nil {
		return "", err
	}
	if err := checkName("table", table); err != nil {
		return "", err
	}
	if suffix != "posdel" && suffix != "upserts" {
		return "", fmt.Errorf("chain suffix %q", suffix)
	}
	return schemaName + "/" + table + "." + entry + "." + suffix, nil
}

// PosdelSchema is the schema of a .posdel file: one non-nullable INT64
// column "row".
func PosdelSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: ColRow, Type: arrow.PrimitiveTypes.Int64}}, nil)
}

// UpsertsSchema is the schema of a .upserts file: the table's columns as
// ArrowSchema maps them, then non-nullable STRING columns bintrail_pk and
// bintrail_op. It is ErrFullOnly for a FullOnly table.
func UpsertsSchema(t *schema.Table) (*arrow.Schema, error) {
	if FullOnly(t) {
		return nil, fmt.Errorf("table %s: %w", t.QualifiedName(), ErrFullOnly)
	}
	sc, err := ArrowSchema(t)
	if err != nil {
		return nil, err
	}
	fields := append(sc.Fields(),
		arrow.Field{Name: ColPK, Type: arrow.BinaryTypes.String},
		arrow.Field{Name: ColOp, Type: arrow.BinaryTypes.String})
	return arrow.NewSchema(fields, nil), nil
}

// WriteEmptyChainStart writes the empty chain start pair of t into b,
// "<schema>/<table>.000000.posdel" and ".000000.upserts" (zero rows each),
// and returns their paths, the table's Chain in the manifest. It is
// ErrFullOnly for a FullOnly table (whose manifest Kind is KindFull).
func WriteEmptyChainStart(b *Builder, t *schema.Table) ([]string, error) {
	up, err := UpsertsSchema(t)
	if err != nil {
		return nil, err
	}
	var chain []string
	for _, f := range []struct {
		suffix string
		sc     *arrow.Schema
	}{{"posdel", PosdelSchema()}, {"upserts", up}} {
		rel, err := ChainFile(t.Schema, t.Name, "000000", f.suffix)
		if err != nil {
			return nil, err
		}
		if _, err := b.WriteFile(rel, func(w io.Writer) error { return writeEmpty(w, f.sc) }); err != nil {
			return nil, err
		}
		chain = append(chain, rel)
	}
	return chain, nil
}

// writeEmpty writes a Parquet file of schema sc with zero rows (and no row
// group).
func writeEmpty(w io.Writer, sc *arrow.Schema) error {
	fw, err := newParquetWriter(sc, &countingWriter{w: w}, WriterOptions{})
	if err != nil {
		return err
	}
	return fw.Close()
}
