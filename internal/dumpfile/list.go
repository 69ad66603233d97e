package dumpfile

import (
	"cmp"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// TableFiles are the files of one table (or view) of a dump. Paths are
// names in the dump folder, as fs.FS paths.
type TableFiles struct {
	Schema, Table string
	// DatabaseFile is "<db>-schema-create.sql", "" when the dump has none.
	DatabaseFile string
	// SchemaFile holds the CREATE TABLE ("<db>.<t>-schema.sql"); for a view
	// it is the file with the CREATE VIEW ("<db>.<v>-schema-view.sql" when
	// present).
	SchemaFile string
	// DataFiles are the INSERT files in order: "<db>.<t>.sql", then the
	// chunks "<db>.<t>.00000.sql", "<db>.<t>.00001.sql", ... (and newer
	// mydumper's "<db>.<t>.00000.00001.sql" sub-chunks) by number. Empty
	// for an empty table dumped without --build-empty-files.
	DataFiles []string
	IsView    bool
}

// Name returns "schema.table" for messages.
func (t TableFiles) Name() string { return t.Schema + "." + t.Table }

// Suffixes of mydumper's non-data files.
const (
	sfxCreateDB = "-schema-create.sql"
	sfxView     = "-schema-view.sql"
	sfxSchema   = "-schema.sql"
)

// ignoredSuffixes are per-table or per-database files that hold no rows and
// no table definition: triggers, routines and events, sequences, checksums
// and newer mydumper's per-table metadata.
var ignoredSuffixes = []string{"-schema-triggers.sql", "-schema-post.sql", "-schema-sequence.sql",
	"-schema-create-tablespace.sql", "-checksum", "-metadata"}

type fileEntry struct {
	part, sub int64 // -1, -1 for "<db>.<t>.sql"
	name      string
}

// ListTables lists the tables and views of the mydumper dump in fsys (the
// dump folder itself; only its top level is read). Tables come sorted by
// schema and table name, each with its schema file and data files; views
// are returned apart, for a note, since they hold no rows. Every database
// the dump holds is listed (mysql and sys included unless mydumper was
// given --database/--regex).
//
// It fails, naming the file, on compressed files (.gz, .zst: mydumper
// --compress), LOAD DATA / CSV files (.dat, .csv), a data file without a
// schema file, a data file for a view, and any other .sql file it cannot
// place, so that no rows are silently left behind. A schema file whose
// statement is a CREATE VIEW marks a view even without "-schema-view.sql".
func ListTables(fsys fs.FS) (tables, views []TableFiles, err error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, nil, fmt.Errorf("list dump folder: %w", err)
	}
	dbs := map[string]string{} // db -> schema-create file
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "metadata" || name == "metadata.partial" {
			continue
		}
		if err := unsupportedFile(name); err != nil {
			return nil, nil, err
		}
		if db, ok := strings.CutSuffix(name, sfxCreateDB); ok {
			dbs[db] = name
			continue
		}
		names = append(names, name)
	}
	byKey := map[[2]string]*TableFiles{}
	get := func(db, table string) *TableFiles {
		k := [2]string{db, table}
		if byKey[k] == nil {
			byKey[k] = &TableFiles{Schema: db, Table: table, DatabaseFile: dbs[db]}
		}
		return byKey[k]
	}
	type dataName struct{ db, rest, name string }
	var data []dataName
	for _, name := range names {
		if ignoredFile(name) {
			continue
		}
		if !strings.HasSuffix(name, ".sql") {
			continue // not mydumper's: README, logs, ...
		}
		db, rest, ok := splitDB(name, dbs)
		if !ok {
			return nil, nil, fmt.Errorf("dump file %s: not a mydumper file name (<db>.<table>...sql)", name)
		}
		switch {
		case strings.HasSuffix(rest, sfxView):
			t := get(db, strings.TrimSuffix(rest, sfxView))
			t.IsView, t.SchemaFile = true, name
		case strings.HasSuffix(rest, sfxSchema):
			t := get(db, strings.TrimSuffix(rest, sfxSchema))
			if !t.IsView {
				t.SchemaFile = name
			}
		default:
			base := strings.TrimSuffix(rest, ".sql")
			if base == rest || base == "" {
				return nil, nil, fmt.Errorf("dump file %s: not a mydumper file name (<db>.<table>...sql)", name)
			}
			data = append(data, dataName{db, base, name})
		}
	}
	chunks := map[*TableFiles][]fileEntry{}
	for _, d := range data {
		table, part, sub := placeData(d.db, d.rest, byKey)
		t := byKey[[2]string{d.db, table}]
		if t == nil {
			return nil, nil, fmt.Errorf("dump file %s: data without a schema file for %s.%s (was mydumper run with --no-schemas?)", d.name, d.db, d.rest)
		}
		chunks[t] = append(chunks[t], fileEntry{part, sub, d.name})
	}
	for _, t := range byKey {
		if !t.IsView {
			if err := checkSchemaFile(fsys, t); err != nil {
				return nil, nil, err
			}
		}
		files := chunks[t]
		if t.IsView && len(files) > 0 {
			return nil, nil, fmt.Errorf("dump file %s: data for %s, which is a view", files[0].name, t.Name())
		}
		slices.SortFunc(files, func(a, b fileEntry) int {
			return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.sub, b.sub))
		})
		for _, f := range files {
			t.DataFiles = append(t.DataFiles, f.name)
		}
		if t.IsView {
			views = append(views, *t)
		} else {
			tables = append(tables, *t)
		}
	}
	order := func(a, b TableFiles) int {
		return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Table, b.Table))
	}
	slices.SortFunc(tables, order)
	slices.SortFunc(views, order)
	return tables, views, nil
}

// unsupportedFile rejects compressed and LOAD DATA dump files.
func unsupportedFile(name string) error {
	for _, ext := range []string{".gz", ".zst", ".zstd", ".lz4", ".bz2", ".xz"} {
		if strings.HasSuffix(name, ext) {
			return fmt.Errorf("dump file %s: compressed dump files are not supported, run mydumper without --compress", name)
		}
	}
	for _, ext := range []string{".dat", ".csv", ".tsv"} {
		if strings.HasSuffix(name, ext) {
			return fmt.Errorf("dump file %s: LOAD DATA / CSV dumps are not supported, run mydumper without --load-data/--csv", name)
		}
	}
	return nil
}

func ignoredFile(name string) bool {
	for _, s := range ignoredSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// splitDB splits "<db>.<rest>" using the longest known database name that
// prefixes it, or the first dot when no known database matches.
func splitDB(name string, dbs map[string]string) (db, rest string, ok bool) {
	for d := range dbs {
		if strings.HasPrefix(name, d+".") && len(d) > len(db) {
			db = d
		}
	}
	if db != "" {
		return db, name[len(db)+1:], true
	}
	db, rest, ok = strings.Cut(name, ".")
	return db, rest, ok && db != "" && rest != ""
}

// placeData finds the table of a data file "<db>.<rest>.sql": rest is
// "<t>", "<t>.<part>" or "<t>.<part>.<sub>", where a chunked reading is
// chosen only when its table has a schema file.
func placeData(db, rest string, known map[[2]string]*TableFiles) (table string, part, sub int64) {
	if t, p, ok := cutNumber(rest); ok {
		if known[[2]string{db, t}] != nil {
			return t, p, -1
		}
		if t2, p2, ok := cutNumber(t); ok && known[[2]string{db, t2}] != nil {
			return t2, p2, p
		}
	}
	return rest, -1, -1
}

// cutNumber splits "<s>.<digits>" into s and the number.
func cutNumber(s string) (string, int64, bool) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || i == len(s)-1 {
		return "", 0, false
	}
	for _, c := range s[i+1:] {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	n, err := strconv.ParseInt(s[i+1:], 10, 64)
	return s[:i], n, err == nil
}

// checkSchemaFile makes sure a table has a schema file and marks it as a
// view when that file holds a CREATE VIEW.
func checkSchemaFile(fsys fs.FS, t *TableFiles) error {
	if t.SchemaFile == "" {
		return fmt.Errorf("dump of %s: no schema file %s.%s%s (was mydumper run with --no-schemas?)",
			t.Name(), t.Schema, t.Table, sfxSchema)
	}
	f, err := fsys.Open(t.SchemaFile)
	if err != nil {
		return fmt.Errorf("dump file %s: %w", t.SchemaFile, err)
	}
	defer f.Close()
	stmt, err := readCreate(f, t.SchemaFile)
	if err != nil {
		return err
	}
	t.IsView = createKind(stmt) == "VIEW"
	return nil
}
