package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Snapshot is a published snapshot opened for reading.
type Snapshot struct {
	Dir      string
	Manifest Manifest
}

// DigestError reports a file whose size or sha256 differs from its manifest
// entry: it is never read. GotSHA256 is empty when the size already differs.
type DigestError struct {
	File                  string
	WantSize, GotSize     int64
	WantSHA256, GotSHA256 string
}

func (e *DigestError) Error() string {
	if e.WantSize != e.GotSize {
		return fmt.Sprintf("file %s: size %d, manifest says %d", e.File, e.GotSize, e.WantSize)
	}
	return fmt.Sprintf("file %s: sha256 %s, manifest says %s", e.File, e.GotSHA256, e.WantSHA256)
}

// OpenSnapshot reads the manifest of the snapshot folder dir
// (<source dir>/snapshots/<id>). A folder without manifest.json is not a
// snapshot.
func OpenSnapshot(dir string) (*Snapshot, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("open snapshot %s: %w", filepath.Base(dir), err)
	}
	if m.SnapshotID != filepath.Base(dir) {
		return nil, fmt.Errorf("open snapshot %s: manifest is for %s", filepath.Base(dir), m.SnapshotID)
	}
	return &Snapshot{Dir: dir, Manifest: m}, nil
}

// OpenCurrent opens the snapshot <sourceDir>/current names.
func OpenCurrent(sourceDir string) (*Snapshot, error) {
	id, err := ResolveCurrent(sourceDir)
	if err != nil {
		return nil, err
	}
	return OpenSnapshot(Folder(sourceDir).Snapshot(id))
}

// Path returns the file system path of a snapshot file.
func (s *Snapshot) Path(rel string) string { return filepath.Join(s.Dir, filepath.FromSlash(rel)) }

// Footers reads the footer of every table file of s (metadata only, no
// digest check), in the order of s.Manifest.Tables; an error names the
// snapshot and the file.
func (s *Snapshot) Footers() ([]FooterMeta, error) {
	out := make([]FooterMeta, len(s.Manifest.Tables))
	for i, t := range s.Manifest.Tables {
		f, err := ReadFooter(s.Path(t.File))
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", s.Manifest.SnapshotID, err)
		}
		out[i] = f
	}
	return out, nil
}

// Verify re-reads the file rel and compares its size and sha256 with the
// manifest: a mismatch is a *DigestError, a file not in the manifest an error.
func (s *Snapshot) Verify(rel string) error {
	f, err := s.openVerified(rel)
	if err != nil {
		return err
	}
	return f.Close()
}

// VerifyAll verifies every file of the manifest.
func (s *Snapshot) VerifyAll() error {
	for rel := range s.Manifest.Files {
		if err := s.Verify(rel); err != nil {
			return err
		}
	}
	return nil
}

// openVerified opens rel, checks its digest through the same descriptor and
// returns it positioned anywhere (callers use ReadAt).
func (s *Snapshot) openVerified(rel string) (*os.File, error) {
	want, ok := s.Manifest.Files[rel]
	if !ok {
		return nil, fmt.Errorf("snapshot %s: file %s is not in the manifest", s.Manifest.SnapshotID, rel)
	}
	f, err := os.Open(s.Path(rel))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", s.Manifest.SnapshotID, err)
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("snapshot %s: %w", s.Manifest.SnapshotID, err))
	}
	if st.Size() != want.Size {
		return fail(&DigestError{File: rel, WantSize: want.Size, GotSize: st.Size(), WantSHA256: want.SHA256})
	}
	got, err := digestOf(io.NewSectionReader(f, 0, st.Size()))
	if err != nil {
		return fail(fmt.Errorf("snapshot %s: read %s: %w", s.Manifest.SnapshotID, rel, err))
	}
	if got != want {
		return fail(&DigestError{File: rel, WantSize: want.Size, GotSize: got.Size, WantSHA256: want.SHA256, GotSHA256: got.SHA256})
	}
	return f, nil
}

// TableReader reads the rows of a table file in the SQL text form.
type TableReader struct {
	f    *os.File
	pf   *file.Reader
	rr   pqarrow.RecordReader
	rec  arrow.RecordBatch
	row  int
	read int64
	// skipped are the rows of the row groups not read (OpenTableFileFrom).
	skipped int64
	footer  FooterMeta
	out     []rowimage.Cell
	buf     []byte
	ends    []int
	ncols   int // the table's columns; any after them are chain columns
}

// OpenTable opens the table file of schema.table: it verifies the file's
// digest first (a *DigestError refuses it), then checks that its footer
// agrees with the manifest (row count, fingerprint) and that its columns are
// ArrowSchema of the footer's table.
func (s *Snapshot) OpenTable(schemaName, table string) (*TableReader, error) {
	mt, ok := s.Manifest.Table(schemaName, table)
	if !ok {
		return nil, fmt.Errorf("snapshot %s: no table %s.%s", s.Manifest.SnapshotID, schemaName, table)
	}
	f, err := s.openVerified(mt.File)
	if err != nil {
		return nil, err
	}
	r, err := newTableReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot %s: table %s.%s: %w", s.Manifest.SnapshotID, schemaName, table, err)
	}
	if r.footer.Fingerprint != mt.Fingerprint || r.footer.Rows != mt.Rows {
		r.Close()
		return nil, fmt.Errorf("snapshot %s: table %s.%s: footer fingerprint %s, manifest says %s",
			s.Manifest.SnapshotID, schemaName, table, r.footer.Fingerprint, mt.Fingerprint)
	}
	return r, nil
}

// OpenTableFile reads a table file outside a snapshot (no digest check).
func OpenTableFile(path string) (*TableReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open table file: %w", err)
	}
	r, err := newTableReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open table file %s: %w", path, err)
	}
	return r, nil
}

// OpenTableFileFrom reads a table file outside a snapshot from its row
// group group on (0 is the whole file): the rows before it are not read.
// At the end the rows read must equal those of the row groups read.
func OpenTableFileFrom(path string, group int) (*TableReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open table file: %w", err)
	}
	r, err := openReader(f, nil, group)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open table file %s at row group %d: %w", path, group, err)
	}
	return r, nil
}

func newTableReader(f *os.File) (*TableReader, error) { return newKeyedReader(f, nil) }

// newKeyedReader opens a file of the table's columns followed by the STRING
// columns named extra.
func newKeyedReader(f *os.File, extra []string) (*TableReader, error) { return openReader(f, extra, 0) }

// openReader is newKeyedReader reading from row group group on.
func openReader(f *os.File, extra []string, group int) (*TableReader, error) {
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, err
	}
	r := &TableReader{f: f, pf: pf}
	if r.footer, err = footerFrom(pf.MetaData().KeyValueMetadata()); err != nil {
		return nil, err
	}
	want, err := ArrowSchema(r.footer.Table)
	if err != nil {
		return nil, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	got, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	if got.NumFields() != want.NumFields()+len(extra) {
		return nil, fmt.Errorf("file has %d columns, its table %d (and %d chain columns)", got.NumFields(), want.NumFields(), len(extra))
	}
	for i, name := range extra {
		if g := got.Field(want.NumFields() + i); g.Name != name || !arrow.TypeEqual(g.Type, arrow.BinaryTypes.String) {
			return nil, fmt.Errorf("column %d is %s %s, want chain column %s string", want.NumFields()+i+1, g.Name, g.Type, name)
		}
	}
	r.ncols = want.NumFields()
	for i, w := range want.Fields() {
		if g := got.Field(i); g.Name != w.Name || !arrow.TypeEqual(g.Type, w.Type) {
			return nil, fmt.Errorf("column %d is %s %s, its table says %s %s", i+1, g.Name, g.Type, w.Name, w.Type)
		}
	}
	var groups []int
	if group > 0 {
		n := pf.NumRowGroups()
		if group > n {
			return nil, fmt.Errorf("row group %d of %d", group, n)
		}
		for g := group; g < n; g++ {
			groups = append(groups, g)
		}
		r.skipped = r.footer.Rows
		for _, g := range groups {
			r.skipped -= pf.MetaData().RowGroup(g).NumRows()
		}
	}
	if r.rr, err = fr.GetRecordReader(context.Background(), nil, groups); err != nil {
		return nil, err
	}
	r.out = make([]rowimage.Cell, want.NumFields())
	r.ends = make([]int, 0, want.NumFields())
	r.buf = make([]byte, 0, 4096)
	return r, nil
}

// Table returns the table definition stored in the footer.
func (r *TableReader) Table() *schema.Table { return r.footer.Table }

// Footer returns the file's footer metadata.
func (r *TableReader) Footer() FooterMeta { return r.footer }

// Next returns the next row, one value per column in the SQL text form that
// TableWriter.AppendSQL takes (see appendSQLText), or io.EOF after
// the last row. The row and its slices are valid until the next call. At the
// end the number of rows read must equal the footer's row count.
func (r *TableReader) Next() ([]rowimage.Cell, error) {
	for r.rec == nil || r.row >= int(r.rec.NumRows()) {
		if !r.rr.Next() {
			if err := r.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("read table file: %w", err)
			}
			if r.skipped+r.read != r.footer.Rows {
				return nil, fmt.Errorf("read table file: %d rows, footer says %d", r.skipped+r.read, r.footer.Rows)
			}
			return nil, io.EOF
		}
		r.rec, r.row = r.rr.RecordBatch(), 0
	}
	buf := r.buf[:0]
	ends := r.ends[:0]
	for c := 0; c < r.ncols; c++ {
		var ok bool
		var err error
		if buf, ok, err = appendSQLText(buf, r.rec.Column(c), r.row); err != nil {
			return nil, err
		}
		if !ok {
			ends = append(ends, -1)
			continue
		}
		ends = append(ends, len(buf))
	}
	start := 0
	for c, end := range ends {
		if end < 0 {
			r.out[c] = rowimage.NullCell()
			continue
		}
		r.out[c] = rowimage.TextCell(buf[start:end:end])
		start = end
	}
	r.buf = buf
	r.row++
	r.read++
	return r.out, nil
}

// Close releases the file.
func (r *TableReader) Close() error {
	if r.rr != nil {
		r.rr.Release()
	}
	return r.pf.Close()
}
