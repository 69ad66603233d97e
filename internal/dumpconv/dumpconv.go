// Package dumpconv turns one table of a mydumper dump into a snapshot table
// file: the schema file gives the definition, every data file's rows pass
// through the statement parser into the Parquet writer. Literals are mapped
// to the SQL text form (what SELECT returns), which the writer converts with
// the one type mapping of internal/rowimage. A value that cannot be converted
// fails the table with the file and line; nothing is published.
package dumpconv

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Definition reads the table's CREATE TABLE from its schema file and
// returns it with the definition a snapshot keeps of it
// (schema.Table.Stored: generated columns, which mydumper leaves out of its
// INSERTs, are not stored).
func Definition(fsys fs.FS, schemaName, table, schemaFile string) (*schema.Table, string, error) {
	f, err := fsys.Open(schemaFile)
	if err != nil {
		return nil, "", fmt.Errorf("open schema file %s: %w", schemaFile, err)
	}
	defer f.Close()
	stmt, err := dumpfile.ReadCreateTable(f)
	if err != nil {
		return nil, "", fmt.Errorf("schema file %s: %w", schemaFile, err)
	}
	cat := schema.NewCatalog()
	if _, err := schema.ApplyDDL(cat, schemaName, stmt); err != nil {
		return nil, "", fmt.Errorf("schema file %s: %w", schemaFile, err)
	}
	def, ok := cat.Get(schemaName, table)
	if !ok {
		return nil, "", fmt.Errorf("schema file %s does not create %s.%s", schemaFile, schemaName, table)
	}
	stored, err := def.Stored()
	if err != nil {
		return nil, "", fmt.Errorf("schema file %s: %w", schemaFile, err)
	}
	return stored, stmt, nil
}

// InputError is a row of a data file that does not fit its table: a
// column list or value count that differs from the table's, a value its
// column cannot hold. It is deterministic: converting the same dump again
// fails the same way. (Malformed statements are *dumpfile.SyntaxError and
// values the Parquet writer refuses *snapshot.RowError; both are as
// deterministic.)
type InputError struct {
	File  string
	Line  int
	Table string
	Err   error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%s:%d: table %s: %v", e.File, e.Line, e.Table, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// IsBadInput reports whether err is one of the deterministic errors of a
// conversion (*InputError, *dumpfile.SyntaxError, *snapshot.RowError),
// which no retry can cure.
func IsBadInput(err error) bool {
	var in *InputError
	var syn *dumpfile.SyntaxError
	var row *snapshot.RowError
	return errors.As(err, &in) || errors.As(err, &syn) || errors.As(err, &row)
}
