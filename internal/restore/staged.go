package restore

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Bounds of a staged table's sort: rows that arrive out of key order are
// held in memory up to sideBytes, then written sorted as a side run of
// small row groups; more than maxSideRuns side runs are merged into one.
const (
	sideBytes    = 32 << 20
	sideGroup    = 8192
	maxSideRuns  = 8
	manifestName = "staged.json"
)

// Staged is a table rebuilt at the restore's cut on this worker: one
// or more table files (runs) in Dir, each sorted by the table's key
// (KeyOrder), whose merge is the table in key order; a keyless
// table is one run in the rebuild's order. Foot is the first run's footer
// with the whole table's rows and fingerprint.
type Staged struct {
	Dir    string
	Runs   []string
	Groups map[string][]GroupStart
	Foot   snapshot.FooterMeta
}

// stagedManifest is written last (crash-safely) in a staged table's
// folder: a folder without it is an unfinished staging.
type stagedManifest struct {
	Cut         moment.Cut
	Runs        []string
	Fingerprint snapshot.Fingerprint
	// Groups are where each run's row groups start, by run: what a load
	// seeks by (to a part's first key, past a checkpoint).
	Groups map[string][]GroupStart
}

// GroupStart is the first row of one row group of a run: its row number
// in the run and its key (KeyOrder.Text; "" without a key).
type GroupStart struct {
	Row int64
	Key string `json:",omitempty"`
}

// ReadStaged returns the table staged in dir for cut, if it is complete.
func ReadStaged(dir string, cut moment.Cut) (Staged, bool) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return Staged{}, false
	}
	var m stagedManifest
	if json.Unmarshal(b, &m) != nil || m.Cut.Seq != cut.Seq || m.Cut.Txn.Position != cut.Txn.Position || len(m.Runs) == 0 {
		return Staged{}, false
	}
	for _, r := range m.Runs {
		if _, ok := m.Groups[r]; !ok { // staged by a version that kept no row group index
			return Staged{}, false
		}
	}
	foot, err := snapshot.ReadFooter(filepath.Join(dir, m.Runs[0]))
	if err != nil {
		return Staged{}, false
	}
	for _, r := range m.Runs[1:] {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			return Staged{}, false
		}
	}
	foot.Rows, foot.Fingerprint = m.Fingerprint.Rows, m.Fingerprint
	return Staged{Dir: dir, Runs: m.Runs, Groups: m.Groups, Foot: foot}, true
}

// WriteStaged stages t (opened at cut) in dir, sorted by its key: the
// rows that arrive in key order go to the main run as they come (a
// snapshot of a full backup is in key order, so usually nearly all), the
// others are sorted in memory into side runs. Every run's fingerprint is
// computed while it is written; their sum is the table's.
func WriteStaged(ctx context.Context, dir string, t *moment.Table, meta snapshot.FooterMeta, cut moment.Cut, progress func(string, int64)) (Staged, error) {
	if err := os.RemoveAll(dir); err != nil {
		return Staged{}, err
	}
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return Staged{}, err
	}
	order, err := NewKeyOrder(t.Footer.Table)
	if err != nil {
		return Staged{}, fmt.Errorf("%w: %w", ErrKeyDef, err)
	}
	s := &runSorter{dir: dir, def: t.Footer.Table, meta: meta, order: order}
	defer s.abort()
	if s.main, err = s.create("run-main.parquet", snapshot.WriterOptions{RowGroupRows: stagedGroupRows, Scratch: true, Overlap: true}); err != nil {
		return Staged{}, err
	}
	var n int64
	if err := t.Rows(ctx, func(row []rowimage.Cell) error {
		n++
		if progress != nil && n%(256*1024) == 0 {
			progress(StageStaging, n)
		}
		return s.add(row)
	}); err != nil {
		return Staged{}, err
	}
	m, err := s.finish(cut)
	if err != nil {
		return Staged{}, err
	}
	mb, err := json.Marshal(m)
	if err != nil {
		return Staged{}, err
	}
	if err := atomicfile.Write(filepath.Join(dir, manifestName), filemode.File(), func(w io.Writer) error { _, err := w.Write(mb); return err }); err != nil {
		return Staged{}, err
	}
	st, ok := ReadStaged(dir, cut)
	if !ok {
		return Staged{}, fmt.Errorf("staged %s: its manifest cannot be read back", dir)
	}
	return st, nil
}

// runWriter is one run being written.
type runWriter struct {
	name   string
	f      *atomicfile.File
	tw     *snapshot.TableWriter
	order  *KeyOrder
	groups []GroupStart
}

// append writes row and notes it when it starts a row group.
func (w *runWriter) append(row []rowimage.Cell) error {
	g := w.tw.Groups()
	if err := w.tw.AppendSQL(row); err != nil {
		return err
	}
	if w.tw.Groups() != g {
		w.groups = append(w.groups, GroupStart{Row: w.tw.Rows() - 1, Key: w.order.Text(row)})
	}
	return nil
}

// runSorter splits a table's rows into sorted runs.
type runSorter struct {
	dir   string
	def   *schema.Table
	meta  snapshot.FooterMeta
	order *KeyOrder
	main  *runWriter
	last  []rowimage.Cell // the main run's last key
	has   bool
	side  [][]rowimage.Cell
	bytes int
	runs  []string // side runs written
	// groups are the closed runs' row group starts, by run.
	groups map[string][]GroupStart
	fp     snapshot.Fingerprint
	open   []*runWriter
}

func (s *runSorter) create(name string, opts snapshot.WriterOptions) (*runWriter, error) {
	f, err := atomicfile.Create(filepath.Join(s.dir, name), filemode.File())
	if err != nil {
		return nil, err
	}
	tw, err := snapshot.NewTableWriter(f, s.def, s.meta, opts)
	if err != nil {
		f.Abort()
		return nil, err
	}
	w := &runWriter{name: name, f: f, tw: tw, order: s.order}
	s.open = append(s.open, w)
	return w, nil
}

// close finishes w and adds its fingerprint to the table's.
func (s *runSorter) close(w *runWriter) error {
	s.open = slices.DeleteFunc(s.open, func(o *runWriter) bool { return o == w })
	res, err := w.tw.Close()
	if err != nil {
		w.f.Abort()
		return err
	}
	s.fp.Merge(res.Fingerprint)
	if s.groups == nil {
		s.groups = map[string][]GroupStart{}
	}
	s.groups[w.name] = w.groups
	return w.f.Commit()
}

func (s *runSorter) abort() {
	for _, w := range s.open {
		w.tw.Abort()
		w.f.Abort()
	}
}

// add takes one row (valid only during the call).
func (s *runSorter) add(row []rowimage.Cell) error {
	if s.order == nil || !s.has || s.order.Compare(row, s.last) > 0 {
		if s.order != nil {
			s.last, s.has = s.order.Key(s.last, row), true
		}
		return s.main.append(row)
	}
	c := make([]rowimage.Cell, len(row))
	for i, v := range row {
		c[i] = rowimage.Cell{Null: v.Null, Text: append([]byte(nil), v.Text...)}
		s.bytes += len(v.Text) + 32
	}
	s.side = append(s.side, c)
	if s.bytes >= sideBytes {
		return s.flushSide()
	}
	return nil
}

// flushSide writes the held rows, sorted, as a side run; past maxSideRuns
// the side runs are merged into one.
func (s *runSorter) flushSide() error {
	if len(s.side) == 0 {
		return nil
	}
	slices.SortStableFunc(s.side, s.order.Compare)
	w, err := s.create(fmt.Sprintf("run-%03d.parquet", len(s.runs)+1), snapshot.WriterOptions{RowGroupRows: sideGroup, Scratch: true})
	if err != nil {
		return err
	}
	for _, r := range s.side {
		if err := w.append(r); err != nil {
			return err
		}
	}
	s.side, s.bytes = s.side[:0], 0
	if err := s.close(w); err != nil {
		return err
	}
	s.runs = append(s.runs, w.name)
	if len(s.runs) < maxSideRuns {
		return nil
	}
	return s.mergeSide()
}

// mergeSide merges the side runs into one.
func (s *runSorter) mergeSide() error {
	r, err := openRuns(s.dir, s.runs, s.order)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := s.create(fmt.Sprintf("run-m%03d.parquet", len(s.runs)), snapshot.WriterOptions{RowGroupRows: sideGroup, Scratch: true})
	if err != nil {
		return err
	}
	var dropped snapshot.Fingerprint
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := w.append(row); err != nil {
			return err
		}
	}
	for _, name := range s.runs {
		foot, err := snapshot.ReadFooter(filepath.Join(s.dir, name))
		if err != nil {
			return err
		}
		dropped.Merge(foot.Fingerprint)
	}
	s.fp.Rows, s.fp.Sum = s.fp.Rows-dropped.Rows, s.fp.Sum-dropped.Sum // counted again by the merged run
	if err := s.close(w); err != nil {
		return err
	}
	for _, name := range s.runs {
		os.Remove(filepath.Join(s.dir, name))
		delete(s.groups, name)
	}
	s.runs = []string{w.name}
	return nil
}

// finish closes every run and returns the manifest.
func (s *runSorter) finish(cut moment.Cut) (stagedManifest, error) {
	if err := s.flushSide(); err != nil {
		return stagedManifest{}, err
	}
	if err := s.close(s.main); err != nil {
		return stagedManifest{}, err
	}
	return stagedManifest{Cut: cut, Runs: append([]string{s.main.name}, s.runs...), Fingerprint: s.fp, Groups: s.groups}, nil
}

// RowReader reads a staged table's rows; a row is valid until the next
// call of Next.
type RowReader interface {
	Next() ([]rowimage.Cell, error)
	Close() error
}

// openRuns merges the runs of dir by order (one run: read as it is).
func openRuns(dir string, runs []string, order *KeyOrder) (RowReader, error) {
	m := &runMerge{order: order}
	for _, name := range runs {
		r, err := snapshot.OpenTableFile(filepath.Join(dir, name))
		if err != nil {
			m.Close()
			return nil, err
		}
		m.readers = append(m.readers, r)
	}
	if len(m.readers) == 1 {
		return m.readers[0], nil
	}
	return m, nil
}

// runMerge is a k-way merge of sorted runs; ties go to the earlier run.
// The heap holds each run's next row; the top is replaced in place as its
// run moves on (no allocation per row).
type runMerge struct {
	order   *KeyOrder
	readers []RowReader
	heads   mergeHeap
	started bool
	// advance: the top's row was returned by Next, so its run moves on
	// at the next call.
	advance bool
	// err is the first read error: every later Next returns it (a run
	// that failed mid-read cannot be merged on).
	err error
}

type mergeHead struct {
	run int
	row []rowimage.Cell
}

type mergeHeap struct {
	h     []mergeHead
	order *KeyOrder
}

func (h *mergeHeap) Len() int { return len(h.h) }
func (h *mergeHeap) Less(i, j int) bool {
	if c := h.order.Compare(h.h[i].row, h.h[j].row); c != 0 {
		return c < 0
	}
	return h.h[i].run < h.h[j].run
}
func (h *mergeHeap) Swap(i, j int) { h.h[i], h.h[j] = h.h[j], h.h[i] }
func (h *mergeHeap) Push(x any)    { h.h = append(h.h, x.(mergeHead)) }
func (h *mergeHeap) Pop() any {
	x := h.h[len(h.h)-1]
	h.h = h.h[:len(h.h)-1]
	return x
}

func (m *runMerge) Next() ([]rowimage.Cell, error) {
	if m.err != nil {
		return nil, m.err
	}
	row, err := m.next()
	if err != nil && err != io.EOF {
		m.err = err
	}
	return row, err
}

func (m *runMerge) next() ([]rowimage.Cell, error) {
	switch {
	case !m.started:
		m.heads.order = m.order
		for i, r := range m.readers {
			row, err := r.Next()
			if err == io.EOF {
				continue
			}
			if err != nil {
				return nil, err
			}
			m.heads.h = append(m.heads.h, mergeHead{run: i, row: row})
		}
		heap.Init(&m.heads)
		m.started = true
	case m.advance:
		top := &m.heads.h[0]
		row, err := m.readers[top.run].Next()
		switch {
		case err == io.EOF:
			heap.Pop(&m.heads)
		case err != nil:
			return nil, err
		default:
			top.row = row
			heap.Fix(&m.heads, 0)
		}
	}
	if m.heads.Len() == 0 {
		m.advance = false
		return nil, io.EOF
	}
	m.advance = true
	return m.heads.h[0].row, nil
}

func (m *runMerge) Close() error {
	var first error
	for _, r := range m.readers {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Errors of a staged table a caller classifies: a table whose key cannot
// order its rows (ErrKeyDef), and a key text that cannot be read back
// (ErrKeyText: a checkpoint or part bound written for another table).
var (
	ErrKeyDef  = errors.New("table key")
	ErrKeyText = errors.New("key text")
)
