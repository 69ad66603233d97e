package archive

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/dbtrail/dbtrail/internal/change"
)

// smallFile is a file of 30 events over 3 tables in row groups of at most
// 8 rows.
func smallFile(t *testing.T) ([]byte, []change.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 11))
	evs := randomEvents(rng, 30, 3)
	for i := range evs { // keep it small: no big images
		if len(evs[i].Before) > 1000 {
			evs[i].Before = []byte(`{"big":false}`)
		}
		if len(evs[i].After) > 1000 {
			evs[i].After = []byte(`{"big":true}`)
		}
	}
	b, _ := writeFile(t, evs, WriterOptions{RowGroupRows: 8})
	return b, evs
}

// mustCorrupt fails unless err is a *CorruptError naming the test file.
func mustCorrupt(t *testing.T, what string, err error) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != "test.parquet" || !strings.HasPrefix(err.Error(), "archive test.parquet: ") {
		t.Fatalf("%s: want a *CorruptError for test.parquet, got %v", what, err)
	}
}

func TestTruncatedRefused(t *testing.T) {
	b, _ := smallFile(t)
	for n := 0; n < len(b); n++ {
		_, err := NewReader(bytes.NewReader(b[:n]), int64(n), "test.parquet")
		mustCorrupt(t, "truncated", err)
	}
	// The size is right but the file behind it is shorter: the footer read
	// fails, never a half read.
	_, err := NewReader(bytes.NewReader(b[:len(b)-1]), int64(len(b)), "test.parquet")
	mustCorrupt(t, "short file", err)
	// The footer is read, then the file shrinks under the reader.
	short := &shrinkingReaderAt{b: b}
	r, err := NewReader(short, int64(len(b)), "test.parquet")
	if err != nil {
		t.Fatal(err)
	}
	short.b = b[:len(b)/2]
	var n int
	err = r.Events(func(change.Event) error { n++; return nil })
	mustCorrupt(t, "file shrunk", err)
	if !strings.Contains(err.Error(), "file ends at") {
		t.Fatalf("shrunk file: %v", err)
	}
	grown := append(append([]byte(nil), b...), 0)
	_, err = NewReader(bytes.NewReader(grown), int64(len(grown)), "test.parquet")
	mustCorrupt(t, "byte appended", err)
}

type shrinkingReaderAt struct{ b []byte }

func (s *shrinkingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(s.b).ReadAt(p, off)
}

// TestAlteredRefused flips the bytes of a file in turn (every byte of the
// Parquet footer, every third of the row groups): the Reader either refuses
// the file with a *CorruptError or reads exactly the events written (a flip
// in a part of the footer nothing depends on). A flip inside a row group is
// always caught by its digest.
func TestAlteredRefused(t *testing.T) {
	b, evs := smallFile(t)
	r := openFile(t, b)
	inGroups := func(off int) bool {
		for _, g := range r.groups {
			if int64(off) >= g.Offset && int64(off) < g.Offset+g.Bytes {
				return true
			}
		}
		return false
	}
	harmless := 0
	for off := range b {
		if inGroups(off) && off%3 != 0 {
			continue
		}
		alt := append([]byte(nil), b...)
		alt[off] ^= 0x5a
		ar, err := NewReader(bytes.NewReader(alt), int64(len(alt)), "test.parquet")
		if err == nil {
			var got []change.Event
			got, err = readAll(ar)
			if err == nil {
				if d := sameEvents(got, evs); d != "" {
					t.Fatalf("byte %d altered: read different events: %s", off, d)
				}
				if inGroups(off) {
					t.Fatalf("byte %d altered inside a row group: not detected", off)
				}
				harmless++
				continue
			}
		}
		mustCorrupt(t, "altered", err)
	}
	t.Logf("%d bytes, %d alterations without effect on the events", len(b), harmless)
}

// TestFooterRefused writes files whose footer keys lie and checks each is
// refused when opened, with what is wrong.
func TestFooterRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	evs := randomEvents(rng, 200, 3)
	for _, tc := range []struct {
		name, msg string
		lie       func(w *Writer)
	}{
		{"writer version", `"archive/2", this reader reads "archive/1"`, func(w *Writer) { w.footer.WriterVersion = "archive/2" }},
		{"event count", "its tables count", func(w *Writer) { w.footer.Events++ }},
		{"table count", "row groups hold", func(w *Writer) { w.footer.Tables[1].Events--; w.footer.Events-- }},
		{"first seq", "its tables span", func(w *Writer) { w.footer.FirstSeq++ }},
		{"table order", "comes after", func(w *Writer) { w.footer.Tables[0], w.footer.Tables[1] = w.footer.Tables[1], w.footer.Tables[0] }},
		{"table name", "statistics", func(w *Writer) { w.footer.Tables[2].Table += "x" }},
		{"source", "dbtrail.source is empty", func(w *Writer) { w.footer.Source = "" }},
		{"digest", "digest", func(w *Writer) { w.groups[1].XXH64 = "0000000000000000" }},
		{"digest form", "not 16 hex digits", func(w *Writer) { w.groups[0].XXH64 = "xyz" }},
		{"offset", "should start at", func(w *Writer) { w.groups[0].Offset++ }},
		{"row count", "Parquet says", func(w *Writer) { w.groups[0].Rows++ }},
		{"group seq", "starts at", func(w *Writer) { w.groups[0].FirstSeq-- }},
		{"group table", "ends at", func(w *Writer) { w.groups[len(w.groups)-1].Table = 0 }},
		{"hour", "not the start of a UTC hour", func(w *Writer) { w.footer.Hour = w.footer.Hour.Add(time.Minute) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, "main", testHour, WriterOptions{RowGroupRows: 30})
			if err != nil {
				t.Fatal(err)
			}
			for i := range evs {
				if err := w.Append(&evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.flush(); err != nil {
				t.Fatal(err)
			}
			tc.lie(w)
			if _, err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "test.parquet")
			if err == nil && tc.name == "digest" {
				err = r.Verify() // the footer is consistent; the bytes are not
			}
			mustCorrupt(t, tc.name, err)
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q does not say %q", err, tc.msg)
			}
		})
	}
}

// TestNotAnArchive refuses garbage and Parquet files of another schema.
func TestNotAnArchive(t *testing.T) {
	garbage := bytes.Repeat([]byte("PAR1"), 100)
	_, err := NewReader(bytes.NewReader(garbage), int64(len(garbage)), "test.parquet")
	mustCorrupt(t, "garbage", err)

	n, err := schema.NewPrimitiveNode("seq", parquet.Repetitions.Required, parquet.Types.Int64, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{n}, -1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	pw, err := file.NewParquetWriterWithError(&buf, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "test.parquet")
	mustCorrupt(t, "other schema", err)
	if !strings.Contains(err.Error(), "schema is not the archive schema") {
		t.Fatal(err)
	}
}

// errReaderAt fails every read.
type errReaderAt struct{ err error }

func (e errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, e.err }

// TestReadErrorPassedOn: an error of the io.ReaderAt is not corruption.
func TestReadErrorPassedOn(t *testing.T) {
	boom := errors.New("network down")
	_, err := NewReader(errReaderAt{boom}, 1000, "test.parquet")
	var ce *CorruptError
	if !errors.Is(err, boom) || errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "read archive test.parquet: ") {
		t.Fatalf("read error came back as %v", err)
	}
	b, _ := smallFile(t)
	flaky := &flakyReaderAt{b: b}
	r, err := NewReader(flaky, int64(len(b)), "test.parquet")
	if err != nil {
		t.Fatal(err)
	}
	flaky.err = boom
	if err := r.Events(func(change.Event) error { return nil }); !errors.Is(err, boom) || errors.As(err, &ce) {
		t.Fatalf("read error came back as %v", err)
	}
}

type flakyReaderAt struct {
	b   []byte
	err error
}

func (f *flakyReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	return bytes.NewReader(f.b).ReadAt(p, off)
}
