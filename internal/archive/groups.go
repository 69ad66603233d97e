package archive

import "github.com/dbtrail/dbtrail/internal/change"

// Group is one row group of a file as its footer lists it: the table it
// holds (a row group holds events of one table), its events and their seq
// range. Lookups pick the row groups they need from these without reading
// any of them.
type Group struct {
	Schema, Table     string
	Rows              int64
	FirstSeq, LastSeq uint64
}

// Groups returns the file's row groups in file order.
func (r *Reader) Groups() []Group {
	out := make([]Group, len(r.groups))
	for i, g := range r.groups {
		t := r.footer.Tables[g.Table]
		out[i] = Group{Schema: t.Schema, Table: t.Table, Rows: g.Rows, FirstSeq: g.FirstSeq, LastSeq: g.LastSeq}
	}
	return out
}

// GroupEvents calls fn with the events of row group i (of Groups) in seq
// order, after checking the group against its digest, as Events does for
// every group.
func (r *Reader) GroupEvents(i int, fn func(change.Event) error) error {
	return r.scanGroup(i, fn)
}
