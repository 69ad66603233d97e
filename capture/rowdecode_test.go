package capture

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// TestRowDecoderDecodesNestedRows: rows events inside a transaction
// payload (MySQL binlog compression) are decoded too, and no body is kept
// once decoded.
func TestRowDecoderDecodesNestedRows(t *testing.T) {
	d := newRowDecoder()
	top, nested := &replication.RowsEvent{}, &replication.RowsEvent{}
	// Bodies with a position past their data decode to no rows, without
	// needing a table map: enough to see that each is taken.
	d.bodies[top] = rowsBody{pos: 0, data: nil}
	d.bodies[nested] = rowsBody{pos: 0, data: nil}
	if err := d.decodeRows(&replication.BinlogEvent{Event: top}); err != nil {
		t.Fatal(err)
	}
	payload := &replication.TransactionPayloadEvent{Events: []*replication.BinlogEvent{{Event: nested}}}
	if err := d.decodeRows(&replication.BinlogEvent{Event: payload}); err != nil {
		t.Fatal(err)
	}
	if len(d.bodies) != 0 {
		t.Fatalf("%d rows events left undecoded", len(d.bodies))
	}
	if top.Rows == nil || nested.Rows == nil {
		t.Fatal("DecodeData did not run on every rows event")
	}
}
