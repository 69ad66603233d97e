package archive

import (
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/dbtrail/dbtrail/internal/change"
)

// Events calls fn with every event of the file in (schema, table, seq)
// order. The events' slices are fn's to keep. An error from fn stops the
// scan and is returned as is; a damaged row group stops it with a
// *CorruptError before any of that row group's events (see Reader).
func (r *Reader) Events(fn func(change.Event) error) error {
	for i := range r.groups {
		if err := r.scanGroup(i, fn); err != nil {
			return err
		}
	}
	return nil
}

// TableEvents calls fn with the events of one table in seq order, like
// Events. It picks the table's row groups by their schema_name and
// table_name statistics and reads nothing of the others. A table that is not
// in the file has no events.
func (r *Reader) TableEvents(schemaName, table string, fn func(change.Event) error) error {
	md := r.pf.MetaData()
	for i := range r.groups {
		rg := md.RowGroup(i)
		s, _, err := byteStats(rg, colSchema)
		if err != nil {
			return r.corrupt(fmt.Errorf("row group %d: %w", i, err))
		}
		t, _, err := byteStats(rg, colTable)
		if err != nil {
			return r.corrupt(fmt.Errorf("row group %d: %w", i, err))
		}
		if string(s) != schemaName || string(t) != table {
			continue // min = max: NewReader checked it
		}
		if err := r.scanGroup(i, fn); err != nil {
			return err
		}
	}
	return nil
}

// Verify reads every row group and checks it against its digest without
// decoding it: a file that passes holds exactly the bytes its writer wrote.
func (r *Reader) Verify() error {
	for i := range r.groups {
		if _, err := r.load(i); err != nil {
			return err
		}
	}
	return nil
}

// load reads row group i whole into r.buf and checks its digest.
func (r *Reader) load(i int) ([]byte, error) {
	g := &r.groups[i]
	if int64(cap(r.buf)) < g.Bytes {
		r.buf = make([]byte, g.Bytes)
	}
	buf := r.buf[:g.Bytes]
	if _, err := r.src.readAt(buf, g.Offset); err != nil {
		return nil, r.fail(fmt.Errorf("row group %d: %w", i, err))
	}
	if got := xxhash.Sum64(buf); fmt.Sprintf("%016x", got) != g.XXH64 {
		t := r.footer.Tables[g.Table]
		return nil, r.corrupt(fmt.Errorf("row group %d (%s.%s): bytes %d..%d have digest %016x, the footer says %s",
			i, t.Schema, t.Table, g.Offset, g.Offset+g.Bytes, got, g.XXH64))
	}
	return buf, nil
}

// scanGroup checks row group i against its digest, then decodes it batch by
// batch and calls fn with each event.
func (r *Reader) scanGroup(i int, fn func(change.Event) error) error {
	buf, err := r.load(i)
	if err != nil {
		return err
	}
	g := &r.groups[i]
	r.src.win, r.src.winOff = buf, g.Offset
	defer func() { r.src.win = nil }()
	t := &r.footer.Tables[g.Table]
	fail := func(err error) error {
		return r.corrupt(fmt.Errorf("row group %d (%s.%s): %w", i, t.Schema, t.Table, err))
	}
	d, err := newDecoder(r.pf.RowGroup(i), g, t, r.footer.Hour)
	if err != nil {
		return fail(err)
	}
	for done := int64(0); done < g.Rows; {
		n := min(batchRows, g.Rows-done)
		evs, err := d.next(int(n))
		if err != nil {
			return fail(err)
		}
		for k := range evs {
			if err := fn(evs[k]); err != nil {
				return err
			}
		}
		done += n
	}
	if err := d.finish(); err != nil {
		return fail(err)
	}
	return nil
}
