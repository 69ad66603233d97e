package dumpconv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// recordSink keeps a copy of every row it is given; it refuses row failAt
// (1-based; 0 never).
type recordSink struct {
	rows   [][]rowimage.Cell
	failAt int
}

var errRefused = errors.New("refused")

func (s *recordSink) AppendSQL(row []rowimage.Cell) error {
	if len(s.rows)+1 == s.failAt {
		return errRefused
	}
	cp := make([]rowimage.Cell, len(row))
	for i, v := range row {
		cp[i] = rowimage.Cell{Null: v.Null, Text: append([]byte{}, v.Text...)}
	}
	s.rows = append(s.rows, cp)
	return nil
}

// bigDump returns files of n rows each of table app.t (schemaSQL), with
// values that cross every path of the reader: latin1 bytes, escapes, BIT
// as a number and as bytes, NULL and the empty string, several INSERTs per
// file, and the SQL text form expected of each row.
func bigDump(files, n int) (fstest.MapFS, []string, [][]rowimage.Cell) {
	fsys := fstest.MapFS{"app.t-schema.sql": {Data: []byte(schemaSQL)}}
	var names []string
	var want [][]rowimage.Cell
	id := 0
	for f := range files {
		var b bytes.Buffer
		b.WriteString(header)
		for i := range n {
			id++
			if i%700 == 0 {
				if i > 0 {
					b.WriteString(";\n")
				}
				b.WriteString("INSERT INTO `t` VALUES\n")
			} else {
				b.WriteString(",\n")
			}
			name, nameText := "\"caf\xe9 \\\"q\\\" \\\\\"", rowimage.TextCell([]byte("café \"q\" \\"))
			switch id % 3 {
			case 1:
				name, nameText = "NULL", rowimage.NullCell()
			case 2:
				name, nameText = `""`, rowimage.TextCell([]byte{})
			}
			bit, bitText := fmt.Sprint(id%4096), rowimage.TextCell([]byte{byte(id % 4096 >> 8), byte(id % 4096)})
			if id%5 == 0 {
				bit, bitText = "\"\x0f\xff\"", rowimage.TextCell([]byte{0x0f, 0xff})
			}
			note := strings.Repeat("x", id%50) + fmt.Sprintf("\\n%d\\0", id)
			fmt.Fprintf(&b, "(%d,%s,%s,\"%s\")", id, name, bit, note)
			noteText := strings.Repeat("x", id%50) + fmt.Sprintf("\n%d\x00", id)
			want = append(want, []rowimage.Cell{rowimage.TextCell([]byte(fmt.Sprint(id))), nameText, bitText, rowimage.TextCell([]byte(noteText))})
		}
		b.WriteString(";\n")
		name := fmt.Sprintf("app.t.%05d.sql", f)
		fsys[name] = &fstest.MapFile{Data: b.Bytes()}
		names = append(names, name)
	}
	return fsys, names, want
}

// TestConvertPipelineKeepsEveryRowInOrder: rows spread over many batches
// and files reach the sink whole and in dump order; NULL stays NULL and
// the empty string stays empty.
func TestConvertPipelineKeepsEveryRowInOrder(t *testing.T) {
	fsys, names, want := bigDump(3, 5_000)
	def, _, err := Definition(fsys, "app", "t", "app.t-schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	var s recordSink
	var files []int
	err = Convert(context.Background(), fsys, names, def, &s, func(file int, rows int64) { files = append(files, file) })
	if err != nil {
		t.Fatal(err)
	}
	if len(s.rows) != len(want) {
		t.Fatalf("sink got %d rows, want %d", len(s.rows), len(want))
	}
	for i := range want {
		for j := range want[i] {
			g, w := s.rows[i][j], want[i][j]
			if g.Null != w.Null || !bytes.Equal(g.Text, w.Text) {
				t.Fatalf("row %d column %d: got null=%v %q, want null=%v %q", i+1, j, g.Null, g.Text, w.Null, w.Text)
			}
		}
	}
	if fmt.Sprint(files) != "[0 1 2]" {
		t.Fatalf("progress after files %v", files)
	}
}

// countingFS counts the files open.
type countingFS struct {
	fs.FS
	open *atomic.Int32
}

type countedFile struct {
	fs.File
	open *atomic.Int32
}

func (c countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err == nil {
		c.open.Add(1)
		f = countedFile{f, c.open}
	}
	return f, err
}

func (f countedFile) Close() error {
	f.open.Add(-1)
	return f.File.Close()
}

// TestConvertFailsNamingTheRowAndStopsReading: a row the sink refuses, a
// value that does not fit and a malformed statement each fail with file
// and line, after the rows before them; the reading goroutine has ended
// and closed its file when Convert returns.
func TestConvertFailsNamingTheRowAndStopsReading(t *testing.T) {
	fsys, names, _ := bigDump(2, 5_000)
	def, _, err := Definition(fsys, "app", "t", "app.t-schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(fsys[names[1]].Data, []byte("(7003,NULL,2907,"), []byte("(7003,NULL,99999999999999999999,"), 1)
	cut := fsys[names[1]].Data[:len(fsys[names[1]].Data)/2]
	for _, c := range []struct {
		name, data string
		failAt     int
		want       string
		rows       int
	}{
		{"sink refuses", "", 6_001, "app.t.00001.sql:1006: refused", 6_000},
		{"value does not fit", string(bad), 0, "app.t.00001.sql:2009: table app.t: column b: BIT value", 7_002},
		{"file cut mid-statement", string(cut), 0, "app.t.00001.sql:", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := fstest.MapFS{}
			for k, v := range fsys {
				m[k] = v
			}
			if c.data != "" {
				m[names[1]] = &fstest.MapFile{Data: []byte(c.data)}
			}
			var open atomic.Int32
			s := recordSink{failAt: c.failAt}
			err := Convert(context.Background(), countingFS{m, &open}, names, def, &s, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !IsBadInput(err) && !errors.Is(err, errRefused) {
				t.Fatalf("got %v, want an error naming %s", err, c.want)
			}
			if c.rows >= 0 && len(s.rows) != c.rows {
				t.Fatalf("sink got %d rows before the error, want %d", len(s.rows), c.rows)
			}
			if n := open.Load(); n != 0 {
				t.Fatalf("%d data files still open after Convert returned", n)
			}
		})
	}
}

// TestConvertStopsWhenCancelled: a cancelled context ends the conversion
// with its error.
func TestConvertStopsWhenCancelled(t *testing.T) {
	fsys, names, _ := bigDump(2, 5_000)
	def, _, err := Definition(fsys, "app", "t", "app.t-schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var open atomic.Int32
	if err := Convert(ctx, countingFS{fsys, &open}, names, def, &recordSink{}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if open.Load() != 0 {
		t.Fatal("a data file is still open")
	}
}
