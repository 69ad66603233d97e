package dumpconv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// estimateTable is a table of the estimate test: its CREATE TABLE and a
// row of a key as mydumper writes it (the text between the parentheses).
type estimateTable struct {
	name, create string
	row          func(r *rand.Rand, id int) string
	rows         int
}

// escape quotes b as mydumper does (mysql_real_escape_string).
func escape(b []byte) string {
	var s strings.Builder
	s.WriteByte('"')
	for _, c := range b {
		switch c {
		case 0:
			s.WriteString(`\0`)
		case '\n':
			s.WriteString(`\n`)
		case '\r':
			s.WriteString(`\r`)
		case 0x1a:
			s.WriteString(`\Z`)
		case '\\', '"', '\'':
			s.WriteByte('\\')
			s.WriteByte(c)
		default:
			s.WriteByte(c)
		}
	}
	s.WriteByte('"')
	return s.String()
}

func estimateTables() []estimateTable {
	words := []string{"order", "shipped", "customer", "paid", "refund", "warehouse", "note", "the", "and", "of", "express"}
	text := func(r *rand.Rand, n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return escape([]byte(b.String()))
	}
	return []estimateTable{
		{name: "wide", rows: 4000,
			create: "CREATE TABLE `wide` (\n  `id` bigint NOT NULL,\n  `title` varchar(200) DEFAULT NULL,\n  `body` text,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\n",
			row: func(r *rand.Rand, id int) string {
				return fmt.Sprintf("%d,%s,%s", id, text(r, 60+r.IntN(100)), text(r, 300+r.IntN(700)))
			}},
		{name: "ints", rows: 80000,
			create: "CREATE TABLE `ints` (\n  `id` bigint NOT NULL,\n  `a` int DEFAULT NULL,\n  `b` bigint DEFAULT NULL,\n  `c` smallint DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB;\n",
			row: func(r *rand.Rand, id int) string {
				return fmt.Sprintf("%d,%d,%d,%d", id, r.IntN(1<<20), r.Int64N(1<<40), r.IntN(100))
			}},
		{name: "blobs", rows: 2500,
			create: "CREATE TABLE `blobs` (\n  `id` bigint NOT NULL,\n  `kind` int DEFAULT NULL,\n  `data` blob,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB;\n",
			row: func(r *rand.Rand, id int) string {
				b := make([]byte, 500+r.IntN(1500))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				return fmt.Sprintf("%d,%d,%s", id, r.IntN(5), escape(b))
			}},
	}
}

// dumpOf writes tb's rows as mydumper does: three data files, each a
// header and INSERT statements of about 256 KiB, one row a line.
func dumpOf(t *testing.T, tb estimateTable) (fstest.MapFS, []string, *schema.Table) {
	t.Helper()
	r := rand.New(rand.NewPCG(36, uint64(len(tb.name))))
	schemaFile := "app." + tb.name + "-schema.sql"
	fsys := fstest.MapFS{schemaFile: {Data: []byte(header + tb.create)}}
	var files []string
	per := (tb.rows + 2) / 3
	for f := range 3 {
		var d bytes.Buffer
		d.WriteString(header)
		stmt := 0
		for id := f*per + 1; id <= min((f+1)*per, tb.rows); id++ {
			if stmt == 0 {
				fmt.Fprintf(&d, "INSERT INTO `%s` VALUES\n", tb.name)
			} else {
				d.WriteString(",\n")
			}
			at := d.Len()
			fmt.Fprintf(&d, "(%s)", tb.row(r, id))
			if stmt += d.Len() - at; stmt > 256<<10 {
				d.WriteString(";\n")
				stmt = 0
			}
		}
		if stmt > 0 {
			d.WriteString(";\n")
		}
		name := fmt.Sprintf("app.%s.%05d.sql", tb.name, f)
		fsys[name] = &fstest.MapFile{Data: d.Bytes()}
		files = append(files, name)
	}
	def, _, err := Definition(fsys, "app", tb.name, schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return fsys, files, def
}

// converted is the bytes of the table file Convert writes of files, as
// ConvertTable writes it.
func converted(t *testing.T, fsys fstest.MapFS, files []string, def *schema.Table, meta snapshot.FooterMeta) uint64 {
	t.Helper()
	var out bytes.Buffer
	tw, err := snapshot.NewTableWriter(&out, def, meta, snapshot.WriterOptions{Overlap: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Abort()
	if err := Convert(context.Background(), fsys, files, def, tw, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return uint64(out.Len())
}

// TestEstimate: the convert estimate of a table with wide text, one with
// only integers and one with blobs, against the table file the real
// conversion writes: written ÷ estimate is between 0.4 and 1, whether the
// sample is all the files (SampleBytes) or a prefix cut at a statement's
// end in the first or a later file.
func TestEstimate(t *testing.T) {
	ctx := context.Background()
	meta := snapshot.FooterMeta{SnapshotID: "20261206T000000Z", Source: "main"}
	for _, tb := range estimateTables() {
		t.Run(tb.name, func(t *testing.T) {
			fsys, files, def := dumpOf(t, tb)
			var total uint64
			for _, f := range files {
				total += uint64(len(fsys[f].Data))
			}
			written := converted(t, fsys, files, def, meta)
			for _, limit := range []int64{SampleBytes, 300 << 10, int64(len(fsys[files[0]].Data)) + 300<<10} {
				est, sample, err := estimate(ctx, fsys, files, def, meta, limit)
				if err != nil {
					t.Fatal(err)
				}
				x := spaceneed.Ratio(written, est.Bytes)
				t.Logf("sample limit %d: %d of %d text bytes → %d; wrote %d, estimate %d, ratio %.2f", limit, sample.Text, total, sample.Parquet, written, est.Bytes, x)
				if !est.Sure || x < 0.4 || x > 1 {
					t.Errorf("sample limit %d: wrote %d for an estimate of %d (sure %v): ratio %.2f, want 0.4 to 1", limit, written, est.Bytes, est.Sure, x)
				}
				if sample.Text == 0 || sample.Text > uint64(limit) || sample.Text > total {
					t.Errorf("sample limit %d: sampled %d of %d text bytes", limit, sample.Text, total)
				}
			}
		})
	}
}

// TestEstimateFallsBack: files of at most spaceneed.Floor bytes are not
// sampled, and a prefix that cannot be converted (a raw newline after a
// semicolon inside a string, which mydumper never writes) gives the
// upper bound, the files themselves: the conversion reports what is wrong.
func TestEstimateFallsBack(t *testing.T) {
	ctx := context.Background()
	meta := snapshot.FooterMeta{SnapshotID: "20261206T000000Z", Source: "main"}
	fsys := fstest.MapFS{"app.t-schema.sql": {Data: []byte(schemaSQL)},
		"app.t.00000.sql": {Data: []byte(header + "INSERT INTO `t` VALUES\n(1,\"a\",NULL,NULL);\n")}}
	def, _, err := Definition(fsys, "app", "t", "app.t-schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	est, sample, err := Estimate(ctx, fsys, []string{"app.t.00000.sql"}, def, meta)
	if err != nil || est != (spaceneed.Estimate{Bytes: spaceneed.Floor, Sure: true}) || sample.Text != 0 {
		t.Errorf("a small table: %+v, sample %+v, %v; want the floor, sure, no sample", est, sample, err)
	}
	odd := header + "INSERT INTO `t` VALUES\n(1,\"a\",NULL,\"x;\n" + strings.Repeat("y", 600<<10) + "\");\n"
	fsys["app.t.00000.sql"] = &fstest.MapFile{Data: []byte(odd)}
	est, sample, err = estimate(ctx, fsys, []string{"app.t.00000.sql"}, def, meta, 300<<10)
	if err != nil || est != (spaceneed.Estimate{Bytes: uint64(len(odd)), Sure: true}) || sample.Text != 0 {
		t.Errorf("an odd prefix: %+v, sample %+v, %v; want the files' %d bytes, sure, no sample", est, sample, err, len(odd))
	}
	if _, _, err := Estimate(ctx, fsys, []string{"app.t.00001.sql"}, def, meta); err == nil || !strings.Contains(err.Error(), "app.t.00001.sql") {
		t.Errorf("a missing data file: %v, want an error naming it", err)
	}
}
