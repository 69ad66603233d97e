package exportdir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// ErrBadChanges is matched (errors.Is) by the errors of changes that
// cannot be written as they are: an event of a schema version the history
// does not define, a definition or row the changes file refuses. A retry
// reads the same changes.
var ErrBadChanges = errors.New("changes cannot be written")

// ChangesFile is one written changes file: its path in the staging folder
// (slash-separated), rows and digest.
type ChangesFile struct {
	Path string
	Rows int64
	digest.Digest
}

// StartChanges readies the staging folder for the changes of
// schemaName.table: its schema folder exists, and the files of an earlier
// attempt are gone (a retry writes them again).
func StartChanges(staging, schemaName, table string) error {
	dir := filepath.Join(staging, schemaName)
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return err
	}
	stale, _ := filepath.Glob(filepath.Join(dir, globQuote(table)+".[0-9]*.parquet"))
	for _, p := range stale {
		os.Remove(p)
	}
	return nil
}

// globQuote escapes glob characters of a file name.
func globQuote(s string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]", "\\", "\\\\").Replace(s)
}

// ChangesWriter writes the changes of one table, in stream order, as one
// file per shape: a schema change that changes the stored columns starts
// the next file, <schema>/<table>.<n>.parquet with n = 000001, 000002, …
// Each file is written crash-safely and appears under its name complete.
type ChangesWriter struct {
	staging string
	base    string // <schema>/<table>.parquet
	key     moment.TableKey
	meta    ChangesMeta
	// versions are the table's schema versions by id; last is its version
	// at the range's end (nil: none defined).
	versions map[uint32]change.SchemaVersion
	last     *change.SchemaVersion
	cur      *shapeFile
	files    []ChangesFile
	events   int64
}

// ChangesMeta is what every file of a ChangesWriter carries besides its
// rows.
type ChangesMeta struct {
	Source string
	// Extra are footer keys of every file; KeyShape (the file's n) is
	// added.
	Extra [][2]string
	// CreateTable returns the CREATE TABLE of shape stored of version v
	// (CreateTableOf).
	CreateTable func(v change.SchemaVersion, stored *schema.Table) string
}

// shapeFile is the open file of one shape.
type shapeFile struct {
	def  *schema.Table
	rel  string
	file *atomicfile.File
	hc   *digest.Hasher
	w    *snapshot.ChangesWriter
}

// NewChangesWriter returns the writer of the changes of k into staging
// (after StartChanges) whose range ends at seq until; hist is the source's
// schema history.
func NewChangesWriter(staging string, k moment.TableKey, hist []change.SchemaVersion, until uint64, meta ChangesMeta) (*ChangesWriter, error) {
	base, err := snapshot.TableFile(k.Schema, k.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadChanges, err)
	}
	w := &ChangesWriter{staging: staging, base: base, key: k, meta: meta, versions: map[uint32]change.SchemaVersion{}}
	for i, v := range hist {
		if v.Schema == k.Schema && v.Table == k.Table {
			w.versions[v.Version] = v
			if v.Definition != nil && schemahist.AtOrBefore(v, until, binlogpos.Position{}) {
				w.last = &hist[i]
			}
		}
	}
	return w, nil
}

// Events is how many changes Add took.
func (w *ChangesWriter) Events() int64 { return w.events }

// Add writes the next change of the table, in a new file when its shape
// differs from the last one's.
func (w *ChangesWriter) Add(e change.Event) error {
	v, ok := w.versions[e.SchemaVersion]
	if !ok || v.Definition == nil {
		return fmt.Errorf("%w: changes of %s: event seq %d follows schema version %d, which the schema history does not define",
			ErrBadChanges, w.key, e.Seq, e.SchemaVersion)
	}
	stored, err := v.Definition.Stored()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadChanges, err)
	}
	if w.cur == nil || !schema.SameShape(w.cur.def, stored) {
		if err := w.closeFile(); err != nil {
			return err
		}
		if err := w.open(v, stored); err != nil {
			return err
		}
	}
	if err := w.cur.w.Append(changeOf(e)); err != nil {
		var re *snapshot.RowError
		if errors.As(err, &re) {
			return fmt.Errorf("%w: %w", ErrBadChanges, err)
		}
		return err
	}
	w.events++
	return nil
}

// Finish closes the last file and returns the files written. With always,
// a table without changes still gets one file, empty, of its shape at the
// range's end (none when no version defines it).
func (w *ChangesWriter) Finish(always bool) ([]ChangesFile, error) {
	if w.events == 0 && always && w.last != nil {
		stored, err := w.last.Definition.Stored()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadChanges, err)
		}
		if err := w.open(*w.last, stored); err != nil {
			return nil, err
		}
	}
	if err := w.closeFile(); err != nil {
		return nil, err
	}
	return w.files, nil
}

// Abort drops the file being written; the files closed stay.
func (w *ChangesWriter) Abort() {
	if w.cur != nil {
		w.cur.w.Abort()
		w.cur.file.Abort()
		w.cur = nil
	}
}

// open starts the file of the next shape.
func (w *ChangesWriter) open(v change.SchemaVersion, stored *schema.Table) error {
	n := len(w.files) + 1
	rel := strings.TrimSuffix(w.base, ".parquet") + fmt.Sprintf(".%06d.parquet", n)
	file, err := atomicfile.Create(filepath.Join(w.staging, filepath.FromSlash(rel)), filemode.File())
	if err != nil {
		return err
	}
	hc := digest.NewHasher()
	meta := snapshot.ChangesMeta{Source: w.meta.Source, CreateTable: w.meta.CreateTable(v, stored),
		Extra: append(append([][2]string{}, w.meta.Extra...), [2]string{snapshot.KeyShape, fmt.Sprint(n)})}
	cw, err := snapshot.NewChangesWriter(io.MultiWriter(file, hc), stored, meta, snapshot.WriterOptions{})
	if err != nil {
		file.Abort()
		return fmt.Errorf("%w: %w", ErrBadChanges, err)
	}
	w.cur = &shapeFile{def: stored, rel: rel, file: file, hc: hc, w: cw}
	return nil
}

// closeFile finishes the open file, if any, and lists it.
func (w *ChangesWriter) closeFile() error {
	if w.cur == nil {
		return nil
	}
	wr, err := w.cur.w.Close()
	if err == nil {
		err = w.cur.file.Commit()
	}
	if err != nil {
		w.Abort()
		return err
	}
	w.files = append(w.files, ChangesFile{Path: w.cur.rel, Rows: wr.Rows, Digest: w.cur.hc.Digest()})
	w.cur = nil
	return nil
}

// changeOf is an index event as a changes file row.
func changeOf(e change.Event) snapshot.Change {
	return snapshot.Change{Seq: e.Seq, Op: byte(e.Op), CommitTime: e.CommitTime, GTID: e.GTID, BinlogFile: e.BinlogFile,
		EndPos: e.EndPos, PK: e.PK, PKBefore: e.PKBefore, Before: e.Before, After: e.After}
}

// CreateTableOf is the CREATE TABLE of shape stored of version v of a
// table: the one in the footer of a snapshot's table file of that shape in
// local (newest first), else the schema change's own CREATE TABLE
// statement, else one rendered from the definition (snapshot.CreateTableSQL).
func CreateTableOf(ctx context.Context, local moment.LocalCatalog, v change.SchemaVersion, stored *schema.Table) string {
	if ms, err := local.Manifests(ctx); err == nil {
		for i := len(ms) - 1; i >= 0; i-- {
			mt, ok := ms[i].Table(v.Schema, v.Table)
			if !ok {
				continue
			}
			snap, err := local.Open(ctx, ms[i].SnapshotID)
			if err != nil {
				continue
			}
			if f, err := snapshot.ReadFooter(snap.Path(mt.File)); err == nil && schema.SameShape(f.Table, stored) {
				return f.CreateTable
			}
		}
	}
	u := strings.ToUpper(strings.Join(strings.Fields(v.DDL), " "))
	if strings.HasPrefix(u, "CREATE TABLE") && !strings.Contains(u, " LIKE ") && !strings.Contains(u, " SELECT ") && !strings.Contains(u, " AS ") {
		return v.DDL
	}
	return snapshot.CreateTableSQL(stored)
}
