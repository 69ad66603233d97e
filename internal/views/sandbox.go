package views

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// sandbox cuts the session off everything but the source folder: DuckDB
// may read files under SourceDir only (allowed_directories; the views read
// the snapshot there) and the session's temp folder (where it spills and
// a tail's changes are staged), has no other file system or network access
// (enable_external_access off: read_csv, read_text, glob, COPY, ATTACH on
// any other path fail), loads and installs no extension, and keeps these
// settings (lock_configuration, set by OpenSession after this). Query's
// read-only check still refuses every statement but SELECT and EXPLAIN,
// and every function that writes or changes settings (by name,
// sandbox_functions.go).
func (s *Session) sandbox(ctx context.Context) error {
	allowed := []string{s.opt.SourceDir, s.tailRoot}
	if s.opt.SharedDir != "" {
		allowed = append(allowed, s.opt.SharedDir)
	}
	var list []string
	for _, d := range allowed {
		dir, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("views: sandbox: %w", err)
		}
		list = append(list, quoteString(filepath.ToSlash(dir)+"/"))
	}
	for _, set := range []string{
		"SET allowed_directories=[" + strings.Join(list, ", ") + "]",
		"SET enable_external_access=false",
		"SET autoload_known_extensions=false",
		"SET allow_community_extensions=false",
	} {
		if _, err := s.conn.ExecContext(ctx, set); err != nil {
			return fmt.Errorf("views: sandbox %s: %w", set, err)
		}
	}
	return nil
}

// IsRefused reports whether err is a session's refusal of a statement:
// not read-only (ErrNotReadOnly), or a file, network or setting the
// sandbox denies (DuckDB's permission error). Nothing ran or was written.
func IsRefused(err error) bool {
	var d *duckdb.Error
	return errors.Is(err, ErrNotReadOnly) || errors.As(err, &d) && d.Type == duckdb.ErrorTypePermission
}
