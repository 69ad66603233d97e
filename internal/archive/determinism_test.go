package archive

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/dbtrail/dbtrail/internal/change"
)

// TestDeterministic writes the same events again and again: the bytes must
// never differ, also when every event has a binlog file of its own (a
// dictionary far larger than Parquet's default dictionary page limit, past
// which the library would switch a chunk to plain pages half way and list
// its two encodings in random order).
func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	evs := randomEvents(rng, 3000, len(testTables))
	many := randomEvents(rng, 30000, 2)
	for i := range many {
		e := &many[i]
		e.BinlogFile = fmt.Sprintf("%s.%06d", strings.Repeat("b", 100), i)
		if len(e.Before) > 1000 {
			e.Before = []byte(`{"a":1}`)
		}
		if len(e.After) > 1000 {
			e.After = []byte(`{"a":2}`)
		}
	}
	for _, tc := range []struct {
		name string
		evs  []change.Event
	}{{"random", evs}, {"binlog file per event", many}} {
		first, _ := writeFile(t, tc.evs, WriterOptions{})
		for i := range 8 {
			again, _ := writeFile(t, tc.evs, WriterOptions{})
			if !bytes.Equal(first, again) {
				t.Fatalf("%s: write %d differs from the first", tc.name, i+2)
			}
		}
		r := openFile(t, first)
		md := r.pf.MetaData()
		for i := 0; i < md.NumRowGroups(); i++ {
			for c := 0; c < numColumns; c++ {
				cc, _ := md.RowGroup(i).ColumnChunk(c)
				if n := dataEncodings(cc); n != 1 {
					t.Fatalf("%s: row group %d column %s has %d data page encodings", tc.name, i, columnDefs()[c].name, n)
				}
			}
		}
		got, err := readAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if d := sameEvents(got, tc.evs); d != "" {
			t.Fatalf("%s: %s", tc.name, d)
		}
	}
}

// dataEncodings counts the encodings of a column chunk's data pages.
func dataEncodings(cc *metadata.ColumnChunkMetaData) int {
	n := 0
	for _, s := range cc.EncodingStats() {
		if s.PageType == 0 || s.PageType == 3 { // DATA_PAGE, DATA_PAGE_V2
			n++
		}
	}
	return n
}
