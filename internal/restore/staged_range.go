package restore

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// stagedGroupRows is the row group size of a staged main run: the
// granularity of a seek (a resumed load reads at most this many rows it
// does not load) and of the split into parts.
const stagedGroupRows = 32 * 1024

// KeyRange is a part of a staged table in key order: the keys from From
// (inclusive; "" from the first) up to To (exclusive; "" to the last),
// as KeyOrder.Text.
type KeyRange struct{ From, To string }

// split divides the staged table into at most parts key ranges of about
// as many rows of its main run each, cut where the main run's row groups
// start; a table without a key, or too small to split, is one range.
func (st Staged) Split(parts int) []KeyRange {
	gs := st.Groups[st.Runs[0]]
	if parts <= 1 || len(gs) < 2 || gs[0].Key == "" {
		return []KeyRange{{}}
	}
	parts = min(parts, len(gs))
	var out []KeyRange
	from := ""
	for k := 1; k < parts; k++ {
		to := gs[k*len(gs)/parts].Key
		out = append(out, KeyRange{From: from, To: to})
		from = to
	}
	return append(out, KeyRange{From: from})
}

// openRange reads the rows of kr in key order. With after (a checkpoint's
// last key) it starts past that row, and reports whether a run held it
// (a staged table without the checkpoint's last row is not the one the
// load started with). A table without a key is read in its one run's
// order from row skip on. Each run is entered at the row group its
// bound falls in (stagedManifest.Groups), so the rows before it are not
// read.
func (st Staged) OpenRange(kr KeyRange, after string, skip int64) (RowReader, bool, error) {
	order, err := NewKeyOrder(st.Foot.Table)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrKeyDef, err)
	}
	if order == nil {
		r, err := st.openRows(skip)
		return r, true, err
	}
	ncols := len(st.Foot.Table.Columns)
	parse := func(text string) ([]rowimage.Cell, error) {
		if text == "" {
			return nil, nil
		}
		row, err := order.Parse(text, ncols)
		if err != nil {
			return nil, fmt.Errorf("%w: staged %s: %w", ErrKeyText, st.Dir, err)
		}
		return row, nil
	}
	lo, err := parse(kr.From)
	if err != nil {
		return nil, false, err
	}
	strict := after != ""
	if strict {
		if lo, err = parse(after); err != nil {
			return nil, false, err
		}
	}
	hi, err := parse(kr.To)
	if err != nil {
		return nil, false, err
	}
	m := &runMerge{order: order}
	saw := !strict // without a last key there is nothing to find
	for _, name := range st.Runs {
		b, err := st.enterRun(name, order, ncols, lo, strict, hi)
		if err != nil {
			m.Close()
			return nil, false, err
		}
		saw = saw || b.sawLow
		m.readers = append(m.readers, b)
	}
	return m, saw, nil
}

// enterRun opens run name at the last row group starting at or before lo
// and reads past the rows before lo (and lo itself when strict).
func (st Staged) enterRun(name string, order *KeyOrder, ncols int, lo []rowimage.Cell, strict bool, hi []rowimage.Cell) (*boundedRun, error) {
	gs := st.Groups[name]
	g := 0
	if lo != nil && len(gs) > 0 {
		var perr error
		// the first group whose start is past lo; the one before holds lo
		i := sort.Search(len(gs), func(i int) bool {
			k, err := order.Parse(gs[i].Key, ncols)
			if err != nil {
				perr = err
				return true
			}
			return order.Compare(k, lo) > 0
		})
		if perr != nil {
			return nil, fmt.Errorf("staged %s run %s: %w", st.Dir, name, perr)
		}
		g = max(i-1, 0)
	}
	r, err := snapshot.OpenTableFileFrom(filepath.Join(st.Dir, name), g)
	if err != nil {
		return nil, err
	}
	b := &boundedRun{r: r, order: order, hi: hi}
	if lo == nil {
		return b, nil
	}
	for {
		row, err := r.Next()
		if err == io.EOF {
			b.done = true
			return b, nil
		}
		if err != nil {
			r.Close()
			return nil, err
		}
		c := order.Compare(row, lo)
		if c == 0 && strict {
			b.sawLow = true
			continue
		}
		if c >= 0 {
			b.pending = row
			return b, nil
		}
	}
}

// openRows reads the one run of a table without a key from row skip on.
func (st Staged) openRows(skip int64) (RowReader, error) {
	name := st.Runs[0]
	gs := st.Groups[name]
	g := sort.Search(len(gs), func(i int) bool { return gs[i].Row > skip }) - 1
	g = max(g, 0)
	r, err := snapshot.OpenTableFileFrom(filepath.Join(st.Dir, name), g)
	if err != nil {
		return nil, err
	}
	from := int64(0)
	if g < len(gs) {
		from = gs[g].Row
	}
	for i := from; i < skip; i++ {
		if _, err := r.Next(); err != nil {
			r.Close()
			return nil, fmt.Errorf("staged %s: skip to row %d: %w", st.Dir, skip, err)
		}
	}
	return r, nil
}

// boundedRun reads one sorted run up to (not including) the key hi.
type boundedRun struct {
	r       *snapshot.TableReader
	order   *KeyOrder
	hi      []rowimage.Cell
	pending []rowimage.Cell // the first row, read while entering
	done    bool
	sawLow  bool
}

func (b *boundedRun) Next() ([]rowimage.Cell, error) {
	if b.done {
		return nil, io.EOF
	}
	row := b.pending
	b.pending = nil
	if row == nil {
		var err error
		if row, err = b.r.Next(); err != nil {
			if err == io.EOF {
				b.done = true
			}
			return nil, err
		}
	}
	if b.hi != nil && b.order.Compare(row, b.hi) >= 0 {
		b.done = true
		return nil, io.EOF
	}
	return row, nil
}

func (b *boundedRun) Close() error { return b.r.Close() }
