package dumpfile

import (
	"errors"
	"io/fs"
)

// ErrUnfinished is matched by ParseMetadata's and Read's error when the
// metadata has no end line: mydumper did not finish (it writes that line
// last).
var ErrUnfinished = errors.New("the dump did not complete")

// BadDumpError is Read's error when a finished-looking dump cannot be
// read: its metadata does not parse or its files do not list. Retrying
// cannot help.
type BadDumpError struct{ Err error }

func (e *BadDumpError) Error() string { return e.Err.Error() }

func (e *BadDumpError) Unwrap() error { return e.Err }

// Dump is a finished mydumper folder: its metadata (binlog coordinates) and
// its tables and views (ListTables).
type Dump struct {
	Metadata Metadata
	Tables   []TableFiles
	Views    []TableFiles
}

// Read reads the dump in fsys (mydumper's output folder). A missing
// metadata file is its fs error (fs.ErrNotExist); a metadata that does not
// parse (an unfinished dump's matches ErrUnfinished) or a folder that does
// not list is a *BadDumpError.
func Read(fsys fs.FS) (Dump, error) {
	f, err := fsys.Open("metadata")
	if err != nil {
		return Dump{}, err
	}
	defer f.Close()
	md, err := ParseMetadata(f)
	if err != nil {
		return Dump{}, &BadDumpError{Err: err}
	}
	if md.Finished.IsZero() {
		return Dump{}, &BadDumpError{Err: ErrUnfinished}
	}
	tables, views, err := ListTables(fsys)
	if err != nil {
		return Dump{}, &BadDumpError{Err: err}
	}
	return Dump{Metadata: md, Tables: tables, Views: views}, nil
}
