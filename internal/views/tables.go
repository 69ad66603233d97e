package views

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"

	_ "github.com/duckdb/duckdb-go/v2" // database/sql driver "duckdb"
)

// chainStart matches the base name of a chain start file after the table
// name: the empty 000000 pair, or a compacted range from 000000 that
// replaced it.
var chainStart = regexp.MustCompile(`^\.000000(-[0-9]+)?\.(posdel|upserts)$`)

// TablesFromSnapshot lists the tables of the snapshot folder snapshotDir
// (a snapshots/<id> folder, or current): every <schema>/<table>.parquet,
// sorted by schema then table, with its columns read from the file's Parquet
// schema (the top-level fields, the columns DuckDB's read_parquet gives) and
// their definitions (TableRef.Defs) from dbtrail's footer, both from the one
// footer read. manifest.json, chain files and anything else not ending
// in .parquet are ignored. A file without dbtrail's footer gets no Defs; a
// footer whose columns are not the file's is an error.
//
// Every table has to have its chain start (<table>.000000.posdel and
// .upserts, or a range 000000-<n> pair) unless it has a reserved column name
// (and so no chain): the views' globs need at least one file to match, and a
// table without it is an error naming the table.
func TablesFromSnapshot(snapshotDir string) ([]TableRef, error) {
	schemas, err := os.ReadDir(snapshotDir)
	if err != nil {
		return nil, fmt.Errorf("views: list snapshot: %w", err)
	}
	var out []TableRef
	for _, s := range schemas {
		if !s.IsDir() {
			continue
		}
		dir := filepath.Join(snapshotDir, s.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("views: list schema %q: %w", s.Name(), err)
		}
		names := map[string]bool{}
		for _, f := range files {
			names[f.Name()] = true
		}
		for _, f := range files {
			table, ok := strings.CutSuffix(f.Name(), ".parquet")
			if !ok || table == "" || f.IsDir() {
				continue
			}
			ref := TableRef{Schema: s.Name(), Table: table}
			path := filepath.Join(dir, f.Name())
			cols, def, err := footerTable(path)
			if err != nil {
				return nil, err
			}
			ref.Columns = cols
			if def != nil {
				if ref.Defs, err = defsOf(def, ref.Columns, path); err != nil {
					return nil, err
				}
				ref.Full = snapshot.FullOnly(def)
			}
			if !ref.fullOnly() && !hasChainStart(names, table) {
				return nil, fmt.Errorf("views: table %q.%q has no chain start (%s.000000.posdel and %s.000000.upserts) in %s: "+
					"its view would fail, DuckDB's read_parquet refuses a glob that matches no file; "+
					"a snapshot written by a full backup or refresh of this version has it",
					ref.Schema, ref.Table, table, table, snapshotDir)
			}
			out = append(out, ref)
		}
	}
	slices.SortFunc(out, func(a, b TableRef) int {
		return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Table, b.Table))
	})
	return out, nil
}

// footerTable reads the footer of the Parquet file at path: its columns
// (the names of its schema's top-level fields, in order) and the table
// definition dbtrail wrote there (snapshot.KeyTable; nil when the file has
// none).
func footerTable(path string) ([]string, *schema.Table, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("views: read footer of %s: %w", path, err)
	}
	defer r.Close()
	root := r.MetaData().Schema.Root()
	cols := make([]string, root.NumFields())
	for i := range cols {
		cols[i] = root.Field(i).Name()
	}
	v := r.MetaData().KeyValueMetadata().FindValue(snapshot.KeyTable)
	if v == nil {
		return cols, nil, nil
	}
	var def schema.Table
	if err := json.Unmarshal([]byte(*v), &def); err != nil {
		return nil, nil, fmt.Errorf("views: footer %s of %s: %w", snapshot.KeyTable, path, err)
	}
	return cols, &def, nil
}

// defsOf returns the definitions of def's columns, which must be cols in
// order.
func defsOf(def *schema.Table, cols []string, path string) ([]schema.Column, error) {
	names := make([]string, len(def.Columns))
	for i, c := range def.Columns {
		names[i] = c.Name
	}
	if !slices.Equal(names, cols) {
		return nil, fmt.Errorf("views: %s: footer columns %q, file columns %q", path, names, cols)
	}
	return def.Columns, nil
}

// hasChainStart reports whether the file names of a schema folder hold both
// files of table's chain start.
func hasChainStart(names map[string]bool, table string) bool {
	var posdel, upserts bool
	for n := range names {
		rest, ok := strings.CutPrefix(n, table)
		if !ok {
			continue
		}
		if m := chainStart.FindStringSubmatch(rest); m != nil {
			posdel = posdel || m[2] == "posdel"
			upserts = upserts || m[2] == "upserts"
		}
	}
	return posdel && upserts
}
