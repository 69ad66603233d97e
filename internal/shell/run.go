package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/views"
)

// RunScript runs every statement of text in order and prints each result;
// the first error stops it.
func RunScript(ctx context.Context, s *views.Session, text, format string, out io.Writer) error {
	stmts, rest, pending := SplitStatements(text)
	if pending { // the last statement needs no ';'
		stmts = append(stmts, strings.TrimSpace(rest))
	}
	if len(stmts) == 0 {
		return fmt.Errorf("no SQL statement given")
	}
	for i, stmt := range stmts {
		if i > 0 && format == FormatTable {
			fmt.Fprintln(out)
		}
		if err := runStatement(ctx, s, stmt, format, out); err != nil {
			return err
		}
	}
	return nil
}

// runStatement runs one read-only statement and prints its result in
// format; the plan of an EXPLAIN prints as DuckDB draws it.
func runStatement(ctx context.Context, s *views.Session, stmt, format string, out io.Writer) error {
	rows, explain, err := s.Query(ctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	r, err := NewResult(rows)
	if err != nil {
		return err
	}
	if explain && format == FormatTable {
		return writeExplain(out, r)
	}
	if _, err := writeResult(out, format, r); err != nil {
		return err
	}
	return rows.Close()
}

// writeExplain prints the last column of each row of an EXPLAIN as is.
func writeExplain(w io.Writer, r *Result) error {
	vals := make([]any, len(r.Cols))
	for {
		ok, err := r.Next(vals)
		if err != nil || !ok {
			return err
		}
		if v := vals[len(vals)-1]; v != nil {
			if _, err := fmt.Fprintln(w, text(v, r.Types[len(vals)-1])); err != nil {
				return err
			}
		}
	}
}

// CutNote says which transaction the session's views answer at: the
// tail's cut, or the snapshot's position.
func CutNote(s *views.Session, sourceDir string) string {
	if t := s.Tail(); t != nil {
		return t.Note
	}
	snap, err := moment.LocalCatalog{SourceDir: sourceDir}.Open(context.Background(), s.Snapshot())
	if err != nil {
		return fmt.Sprintf("cut: snapshot %s (its manifest: %v)", s.Snapshot(), err)
	}
	return SnapshotCutLine(s.Snapshot(), snap.Manifest.Position)
}

// SnapshotCutLine is the cut line of an answer read from snapshot id alone
// (at position p), with no tail.
func SnapshotCutLine(id string, p binlogpos.Position) string {
	g := p.GTID
	if g == "" {
		g = "(none)"
	}
	return fmt.Sprintf("cut: snapshot %s at binlog %s, GTID %s, seq %d (the snapshot alone: no tail)", id, p, g, p.Seq)
}

// IsTerminal reports whether s (a reader or writer) is a character device:
// a terminal (or /dev/null, where a bar harms nobody). Pipes, files and
// buffers are not.
func IsTerminal(s any) bool {
	f, ok := s.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
