package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dbtrail/dbtrail/internal/schema"
)

func changesTable() *schema.Table {
	return &schema.Table{Schema: "shop", Name: "orders", KeyKind: schema.KeyPrimary, Key: []string{"id"},
		Columns: []schema.Column{
			{Name: "id", Type: "bigint", Unsigned: true},
			{Name: "price", Type: "decimal", Precision: 10, Scale: 2, Nullable: true},
			{Name: "note", Type: "varchar", Length: 20, Charset: "utf8mb4", Nullable: true},
			{Name: "at", Type: "datetime", FSP: 6, Nullable: true},
			{Name: "raw", Type: "varbinary", Length: 8, Charset: "binary", Nullable: true},
			{Name: "f", Type: "double", Nullable: true},
		}}
}

// TestChangesWriter writes inserts, an update that changes the key, and
// deletes across three row groups and reads them back with DuckDB: typed
// before and after columns, NULL apart from the empty value, the footer.
func TestChangesWriter(t *testing.T) {
	tbl := changesTable()
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 123456000, time.UTC)
	var buf bytes.Buffer
	w, err := NewChangesWriter(&buf, tbl, ChangesMeta{Source: "main", CreateTable: "CREATE TABLE orders (…)",
		Extra: [][2]string{{"dbtrail.from", "2026-11-29T08:00:00Z"}}}, WriterOptions{RowGroupRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	changes := []Change{
		{Seq: 10, Op: 'i', CommitTime: t0, GTID: "0-1-7", BinlogFile: "binlog.000001", EndPos: 400, PK: "[1]",
			After: []byte(`{"id":1,"price":"9.90","note":"é \"q\"","at":"2026-11-29 08:00:00.000001","raw":"AAE=","f":1.5}`)},
		{Seq: 11, Op: 'i', CommitTime: t0, GTID: "0-1-7", BinlogFile: "binlog.000001", EndPos: 400, PK: "[2]",
			After: []byte(`{"id":2,"price":null,"note":"","at":null,"raw":"","f":null}`)},
		{Seq: 12, Op: 'u', CommitTime: t0.Add(time.Second), BinlogFile: "binlog.000001", EndPos: 900, PK: "[3]", PKBefore: "[1]",
			Before: []byte(`{"id":1,"price":"9.90","note":"é \"q\"","at":"2026-11-29 08:00:00.000001","raw":"AAE=","f":1.5}`),
			After:  []byte(`{"id":3,"price":"10.00","note":"moved","at":"2026-11-29 08:00:00.000001","raw":"AAE=","f":-0.0}`)},
		{Seq: 13, Op: 'd', CommitTime: t0.Add(2 * time.Second), GTID: "0-1-9", BinlogFile: "binlog.000002", EndPos: 120, PK: "[2]",
			Before: []byte(`{"id":2,"price":null,"note":"","at":null,"raw":"","f":null}`)},
		{Seq: 14, Op: 'i', CommitTime: t0.Add(3 * time.Second), GTID: "0-1-10", BinlogFile: "binlog.000002", EndPos: 300, PK: "[18446744073709551615]",
			After: []byte(`{"id":18446744073709551615,"price":"-0.01","note":null,"at":"0000-00-00 00:00:00.000000","raw":null,"f":1e308}`)},
	}
	for _, c := range changes {
		if err := w.Append(c); err != nil {
			t.Fatal(err)
		}
	}
	// A bad value is an error naming column and seq; nothing is written.
	err = w.Append(Change{Seq: 15, Op: 'i', CommitTime: t0, BinlogFile: "binlog.000002", EndPos: 400, PK: "[5]",
		After: []byte(`{"id":5,"price":"abc","note":null,"at":null,"raw":null,"f":null}`)})
	var re *RowError
	if !errors.As(err, &re) || re.Column != "price" || !strings.Contains(err.Error(), "seq 15") {
		t.Fatalf("bad value: %v", err)
	}
	res, err := w.Close()
	if err != nil || res.Rows != 5 || res.RowGroups != 3 {
		t.Fatalf("close: %+v %v", res, err)
	}
	path := filepath.Join(t.TempDir(), "orders.000001.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	conn := duck(t)
	got := queryStrings(t, conn, `SELECT seq, op, strftime(commit_time, '%Y-%m-%d %H:%M:%S.%f'), gtid, binlog_file, end_pos, pk, pk_before,
		before_id, before_price, before_note, before_raw IS NULL, octet_length(before_raw), after_id, after_price, after_note, after_at, hex(after_raw), after_f,
		typeof(after_id), typeof(after_f), typeof(commit_time), typeof(after_raw) FROM '`+path+`' ORDER BY seq`)
	want := [][]string{
		{"10", "insert", "2026-11-29 08:00:00.123456", "0-1-7", "binlog.000001", "400", "[1]", "NULL", "NULL", "NULL", "NULL", "true", "NULL", "1", "9.90", `é "q"`, "2026-11-29 08:00:00.000001", "0001", "1.5", "UBIGINT", "DOUBLE", "TIMESTAMP WITH TIME ZONE", "BLOB"},
		{"11", "insert", "2026-11-29 08:00:00.123456", "0-1-7", "binlog.000001", "400", "[2]", "NULL", "NULL", "NULL", "NULL", "true", "NULL", "2", "NULL", "", "NULL", "", "NULL", "UBIGINT", "DOUBLE", "TIMESTAMP WITH TIME ZONE", "BLOB"},
		{"12", "update", "2026-11-29 08:00:01.123456", "NULL", "binlog.000001", "900", "[3]", "[1]", "1", "9.90", `é "q"`, "false", "2", "3", "10.00", "moved", "2026-11-29 08:00:00.000001", "0001", "-0", "UBIGINT", "DOUBLE", "TIMESTAMP WITH TIME ZONE", "BLOB"},
		{"13", "delete", "2026-11-29 08:00:02.123456", "0-1-9", "binlog.000002", "120", "[2]", "NULL", "2", "NULL", "", "false", "0", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "UBIGINT", "DOUBLE", "TIMESTAMP WITH TIME ZONE", "BLOB"},
		{"14", "insert", "2026-11-29 08:00:03.123456", "0-1-10", "binlog.000002", "300", "[18446744073709551615]", "NULL", "NULL", "NULL", "NULL", "true", "NULL", "18446744073709551615", "-0.01", "NULL", "0000-00-00 00:00:00.000000", "NULL", "1e+308", "UBIGINT", "DOUBLE", "TIMESTAMP WITH TIME ZONE", "BLOB"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
	// The footer.
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	kv := pf.MetaData().KeyValueMetadata()
	for k, v := range map[string]string{
		KeyWriterVersion: ChangesWriterVersion, KeySource: "main", KeySchemaName: "shop", KeyTableName: "orders",
		KeyRowCount: "5", KeyCreateTable: "CREATE TABLE orders (…)", "dbtrail.from": "2026-11-29T08:00:00Z",
		KeyFirstPosition: `{"file":"binlog.000001","pos":400,"gtid":"0-1-7","seq":10}`,
		KeyLastPosition:  `{"file":"binlog.000002","pos":300,"gtid":"0-1-10","seq":14}`,
		KeyFirstCommit:   "2026-11-29T08:00:00.123456Z",
	} {
		if got := kv.FindValue(k); got == nil || *got != v {
			t.Errorf("footer %s = %v, want %q", k, got, v)
		}
	}
}

// TestReadChanges reads back what TestChangesWriter's writer writes.
func TestReadChanges(t *testing.T) {
	tbl := changesTable()
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 5000, time.UTC)
	in := []Change{
		{Seq: 1, Op: 'i', CommitTime: t0, GTID: "0-1-1", BinlogFile: "binlog.000001", EndPos: 10, PK: "[1]",
			After: []byte(`{"id":1,"price":"9.90","note":"x","at":"2026-11-29 08:00:00.000001","raw":"AAE=","f":1.5}`)},
		{Seq: 2, Op: 'u', CommitTime: t0, BinlogFile: "binlog.000001", EndPos: 20, PK: "[2]", PKBefore: "[1]",
			Before: []byte(`{"id":1,"price":"9.90","note":"x","at":"2026-11-29 08:00:00.000001","raw":"AAE=","f":1.5}`),
			After:  []byte(`{"id":2,"price":null,"note":"","at":null,"raw":"","f":null}`)},
		{Seq: 3, Op: 'd', CommitTime: t0, GTID: "0-1-3", BinlogFile: "binlog.000001", EndPos: 30, PK: "[2]",
			Before: []byte(`{"id":2,"price":null,"note":"","at":null,"raw":"","f":null}`)},
	}
	var buf bytes.Buffer
	w, err := NewChangesWriter(&buf, tbl, ChangesMeta{Source: "main"}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range in {
		if err := w.Append(c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []Change
	if _, err := ReadChanges(path, func(c Change) error { got = append(got, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("%d changes, want %d", len(got), len(in))
	}
	for i := range in {
		g, w := got[i], in[i]
		if g.Seq != w.Seq || g.Op != w.Op || !g.CommitTime.Equal(w.CommitTime.Truncate(time.Microsecond)) || g.GTID != w.GTID ||
			g.BinlogFile != w.BinlogFile || g.EndPos != w.EndPos || g.PK != w.PK || g.PKBefore != w.PKBefore ||
			!bytes.Equal(g.Before, w.Before) || !bytes.Equal(g.After, w.After) || (g.Before == nil) != (w.Before == nil) {
			t.Errorf("change %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
