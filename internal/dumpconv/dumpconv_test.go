package dumpconv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

const schemaSQL = "/*!40101 SET NAMES binary*/;\n/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n" +
	"CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `name` varchar(20) CHARACTER SET latin1 DEFAULT NULL,\n" +
	"  `b` bit(12) DEFAULT NULL,\n  `note` text DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\n"

const header = "/*!40101 SET NAMES binary*/;\n/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n/*!40103 SET TIME_ZONE='+00:00' */;\n"

func convert(t *testing.T, files map[string]string) (snapshot.WriteResult, error) {
	t.Helper()
	fsys := fstest.MapFS{"app.t-schema.sql": {Data: []byte(schemaSQL)}}
	var names []string
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
		names = append(names, name)
	}
	if len(names) > 1 {
		names = []string{"app.t.00000.sql", "app.t.00001.sql"}
	}
	def, create, err := Definition(fsys, "app", "t", "app.t-schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(create, "CREATE TABLE `t`") {
		t.Fatalf("create statement %q", create)
	}
	var buf bytes.Buffer
	tw, err := snapshot.NewTableWriter(&buf, def, snapshot.FooterMeta{SnapshotID: "20261129T090000Z", Source: "main"}, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Convert(context.Background(), fsys, names, def, tw, nil); err != nil {
		return snapshot.WriteResult{}, err
	}
	return tw.Close()
}

func TestConvertChunksCompleteInsertAndCharsets(t *testing.T) {
	res, err := convert(t, map[string]string{
		"app.t.00000.sql": header + "INSERT INTO `t` VALUES\n(1,\"caf\xe9\",\"\x0f\xff\",\"a \\\"q\\\" \\\\ \\n line\"),\n(2,NULL,NULL,NULL);\n",
		"app.t.00001.sql": header + "INSERT INTO `t` (`note`,`id`,`b`,`name`) VALUES(\"x\",3,5,\"\")\n,(\"😀\",4,\"\x00\x01\",\"\xff\");\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 4 {
		t.Fatalf("rows %d, want 4", res.Rows)
	}
}

func TestConvertRefusesMalformedInputNamingFileAndLine(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"cut mid-string":     {header + "INSERT INTO `t` VALUES\n(1,\"abc", "app.t.sql:5"},
		"wrong column count": {header + "INSERT INTO `t` VALUES\n(1,\"a\",NULL,NULL),\n(2,\"b\",NULL);\n", "app.t.sql:6"},
		"bad escape at EOF":  {header + "INSERT INTO `t` VALUES\n(1,\"a\\", "app.t.sql:5"},
		"bad value":          {header + "INSERT INTO `t` VALUES\n(1,\"a\",NULL,NULL),\n(x,\"b\",NULL,NULL);\n", "app.t.sql:6"},
		"not an int":         {header + "INSERT INTO `t` VALUES\n(\"seven\",\"a\",NULL,NULL);\n", "app.t.sql:5"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := convert(t, map[string]string{"app.t.sql": c.body})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error naming %s, got %v", c.want, err)
			}
		})
	}
}

// stringsSchema is a table of every column kind whose empty value is not
// NULL.
const stringsSchema = "/*!40101 SET NAMES binary*/;\nCREATE TABLE `s` (\n  `id` int(11) NOT NULL,\n" +
	"  `vc` varchar(20) DEFAULT NULL,\n  `ch` char(5) DEFAULT NULL,\n  `tx` text DEFAULT NULL,\n" +
	"  `e` enum('','a','b') DEFAULT NULL,\n  `st` set('a','b') DEFAULT NULL,\n  `vb` varbinary(8) DEFAULT NULL,\n" +
	"  `bl` blob DEFAULT NULL,\n  `l1` varchar(10) CHARACTER SET latin1 DEFAULT NULL,\n  `js` longtext DEFAULT NULL,\n" +
	"  PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\n"

// convertRows writes rows (nil = NULL, the dump's NULL keyword) as one
// mydumper 0.10 data file of table app.s, converts it and reads the table
// file back.
func convertRows(t *testing.T, rows [][][]byte) [][]rowimage.Cell {
	t.Helper()
	var body bytes.Buffer
	body.WriteString(header + "INSERT INTO `s` VALUES\n")
	for i, row := range rows {
		if i > 0 {
			body.WriteString(",\n")
		}
		body.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				body.WriteByte(',')
			}
			if v == nil {
				body.WriteString("NULL")
				continue
			}
			body.WriteByte('"')
			for _, b := range v {
				switch b {
				case '"', '\\':
					body.WriteByte('\\')
					body.WriteByte(b)
				case '\n':
					body.WriteString(`\n`)
				case 0:
					body.WriteString(`\0`)
				default:
					body.WriteByte(b)
				}
			}
			body.WriteByte('"')
		}
		body.WriteByte(')')
	}
	body.WriteString(";\n")
	fsys := fstest.MapFS{"app.s-schema.sql": {Data: []byte(stringsSchema)}, "app.s.sql": {Data: body.Bytes()}}
	def, _, err := Definition(fsys, "app", "s", "app.s-schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "s.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw, err := snapshot.NewTableWriter(f, def, snapshot.FooterMeta{SnapshotID: "20261129T090000Z", Source: "main"}, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Convert(context.Background(), fsys, []string{"app.s.sql"}, def, tw, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.OpenTableFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [][]rowimage.Cell
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		cp := make([]rowimage.Cell, len(row))
		for i, v := range row {
			cp[i] = rowimage.Cell{Null: v.Null, Text: append([]byte{}, v.Text...)}
		}
		out = append(out, cp)
	}
}

// checkRows compares rows read back with the rows written (nil = NULL).
func checkRows(t *testing.T, got [][]rowimage.Cell, want [][][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(want))
	}
	for i := range want {
		for j, w := range want[i] {
			g := got[i][j]
			if g.Null != (w == nil) || !bytes.Equal(g.Text, w) {
				t.Errorf("row %d column %d: got null=%v %q, want null=%v %q", i+1, j+1, g.Null, g.Text, w == nil, w)
			}
		}
	}
}

// TestConvertEmptyFirstRowIsNotNull is the defect of a first dumped row
// whose empty strings became NULL: the column's reused buffer was still nil.
func TestConvertEmptyFirstRowIsNotNull(t *testing.T) {
	e := []byte{}
	rows := [][][]byte{
		{[]byte("1"), e, e, e, e, e, e, e, e, e},
		{[]byte("2"), nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{[]byte("3"), e, e, e, e, e, e, e, e, e},
	}
	checkRows(t, convertRows(t, rows), rows)
}

// TestConvertRowsToThemselves is a property test: any row of these columns
// (NULL, empty or not, in any order of rows) converts to itself.
func TestConvertRowsToThemselves(t *testing.T) {
	pick := func(r *rand.Rand, choices ...string) []byte {
		switch r.Intn(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		return []byte(choices[r.Intn(len(choices))])
	}
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		rows := make([][][]byte, 1+r.Intn(6))
		for i := range rows {
			rows[i] = [][]byte{[]byte(strconv.Itoa(i + 1)),
				pick(r, "x", "héllo", "a\"b\\c\nd", "0"), pick(r, "ab", "😀"), pick(r, "long text", "NULL"),
				pick(r, "a", "b"), pick(r, "a", "b", "a,b"), pick(r, "\x00", "\xff\x00\x01", "abc"),
				pick(r, "\x00\x00", "blob"), pick(r, "abc", "x y"), pick(r, `{"a":1}`, "[]", `""`)}
		}
		got := convertRows(t, rows)
		checkRows(t, got, rows)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}
