package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// fullEvent is a table map event as a server with binlog_row_metadata=FULL
// writes it (flavor mysql: geometry is not a character column).
func fullEvent() *replication.TableMapEvent {
	cols := []struct {
		name string
		tp   byte
		meta uint16
	}{
		{"id", mysql.MYSQL_TYPE_LONG, 0},
		{"d", mysql.MYSQL_TYPE_NEWDECIMAL, 10<<8 | 2},
		{"v", mysql.MYSQL_TYPE_VARCHAR, 40},
		{"c", mysql.MYSQL_TYPE_STRING, 0xee90}, // char(100) utf8mb4: 400 bytes, bits 8-9 in the type byte
		{"l", mysql.MYSQL_TYPE_STRING, 0xfe0a},
		{"u", mysql.MYSQL_TYPE_STRING, 0xfe10},
		{"e", mysql.MYSQL_TYPE_STRING, 0xf701},
		{"s", mysql.MYSQL_TYPE_STRING, 0xf801},
		{"tx", mysql.MYSQL_TYPE_BLOB, 4},
		{"bl", mysql.MYSQL_TYPE_BLOB, 2},
		{"dt", mysql.MYSQL_TYPE_DATETIME2, 6},
		{"ts", mysql.MYSQL_TYPE_TIMESTAMP2, 3},
		{"tm", mysql.MYSQL_TYPE_TIME2, 0},
		{"b", mysql.MYSQL_TYPE_BIT, 8 << 8},
		{"b1", mysql.MYSQL_TYPE_BIT, 1},
		{"y", mysql.MYSQL_TYPE_YEAR, 0},
		{"g", mysql.MYSQL_TYPE_GEOMETRY, 4},
		{"f", mysql.MYSQL_TYPE_DOUBLE, 8},
		{"dte", mysql.MYSQL_TYPE_DATE, 0},
		{"vb", mysql.MYSQL_TYPE_VARCHAR, 8},
		{"j", mysql.MYSQL_TYPE_JSON, 4},
		{"bi", mysql.MYSQL_TYPE_LONGLONG, 0},
	}
	ev := &replication.TableMapEvent{Schema: []byte("db"), Table: []byte("t"), ColumnCount: uint64(len(cols))}
	for _, c := range cols {
		ev.ColumnName = append(ev.ColumnName, []byte(c.name))
		ev.ColumnType = append(ev.ColumnType, c.tp)
		ev.ColumnMeta = append(ev.ColumnMeta, c.meta)
	}
	// numeric columns in order: id d y f bi; id and bi unsigned
	ev.SignednessBitmap = []byte{0x88}
	// character columns in order: v c l u tx bl vb; default utf8mb4_general_ci
	ev.DefaultCharset = []uint64{45, 2, 8, 3, 63, 5, 63, 6, 63}
	ev.EnumSetDefaultCharset = []uint64{8}
	ev.EnumStrValue = [][][]byte{{[]byte("a"), []byte("it's")}}
	ev.SetStrValue = [][][]byte{{[]byte("x"), []byte("y")}}
	ev.GeometryType = []uint64{1}
	ev.NullBitmap = []byte{0xfe, 0xff, 0x3f} // all but id nullable
	ev.PrimaryKey = []uint64{0}
	ev.PrimaryKeyPrefix = []uint64{0}
	return ev
}

func TestFromTableMap(t *testing.T) {
	got, err := FromTableMap("db", "t", fullEvent(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{
		{Name: "id", Type: "int", Unsigned: true},
		{Name: "d", Type: "decimal", Precision: 10, Scale: 2, Nullable: true},
		{Name: "v", Type: "varchar", Length: 10, Charset: "utf8mb4", Nullable: true},
		{Name: "c", Type: "char", Length: 100, Charset: "utf8mb4", Nullable: true},
		{Name: "l", Type: "char", Length: 10, Charset: "latin1", Nullable: true},
		{Name: "u", Type: "binary", Length: 16, Nullable: true},
		{Name: "e", Type: "enum", Elems: []string{"a", "it's"}, Charset: "latin1", Nullable: true},
		{Name: "s", Type: "set", Elems: []string{"x", "y"}, Charset: "latin1", Nullable: true},
		{Name: "tx", Type: "longtext", Charset: "utf8mb4", Nullable: true},
		{Name: "bl", Type: "blob", Nullable: true},
		{Name: "dt", Type: "datetime", FSP: 6, Nullable: true},
		{Name: "ts", Type: "timestamp", FSP: 3, Nullable: true},
		{Name: "tm", Type: "time", Nullable: true},
		{Name: "b", Type: "bit", Length: 64, Nullable: true},
		{Name: "b1", Type: "bit", Length: 1, Nullable: true},
		{Name: "y", Type: "year", Nullable: true},
		{Name: "g", Type: "point", Nullable: true},
		{Name: "f", Type: "double", Nullable: true},
		{Name: "dte", Type: "date", Nullable: true},
		{Name: "vb", Type: "varbinary", Length: 8, Nullable: true},
		{Name: "j", Type: "json", Nullable: true},
		{Name: "bi", Type: "bigint", Unsigned: true, Nullable: true},
	}
	for i := range max(len(got.Columns), len(want)) {
		var g, w Column
		if i < len(got.Columns) {
			g = got.Columns[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if jsonOf(g) != jsonOf(w) {
			t.Errorf("column %d:\n got %s\nwant %s", i, jsonOf(g), jsonOf(w))
		}
	}
	if got.KeyKind != KeyPrimary || strings.Join(got.Key, ",") != "id" || got.Charset != "utf8mb4" {
		t.Errorf("key %s %v charset %q", got.KeyKind, got.Key, got.Charset)
	}
	if err := CheckTableMap(got, fullEvent()); err != nil {
		t.Errorf("CheckTableMap on its own definition: %v", err)
	}

	// the hint restores logical types and its promoted unique key
	hint := got.Clone()
	hint.Columns[5] = Column{Name: "U", Type: "uuid"}
	hint.Columns[8] = Column{Name: "tx", Type: "json", Charset: "utf8mb4"}
	hint.Columns[2] = Column{Name: "v", Type: "int"} // not a logical type: ignored
	hint.Indexes = []Index{{Name: "uid", Columns: []string{"id"}, Unique: true}, {Name: "iv", Columns: []string{"v"}}}
	ChooseKey(hint)
	got2, err := FromTableMap("db", "t", fullEvent(), hint)
	if err != nil {
		t.Fatal(err)
	}
	if c := got2.Columns[5]; c.Type != "uuid" || c.Name != "u" || c.Length != 0 || !c.Nullable {
		t.Errorf("uuid from hint: %s", jsonOf(c))
	}
	if c := got2.Columns[8]; c.Type != "json" {
		t.Errorf("json from hint: %s", jsonOf(c))
	}
	if c := got2.Columns[2]; c.Type != "varchar" {
		t.Errorf("a non-logical hint type was used: %s", jsonOf(c))
	}
	if got2.KeyKind != KeyUnique || len(got2.Indexes) != 2 || got2.Indexes[0].Name != "uid" {
		t.Errorf("promoted unique key: %s %v %s", got2.KeyKind, got2.Key, jsonOf(got2.Indexes))
	}
}

func TestFromTableMapWithoutNames(t *testing.T) {
	ev := fullEvent()
	ev.ColumnName = nil
	if _, err := FromTableMap("db", "t", ev, nil); err == nil || !strings.Contains(err.Error(), "db.t") {
		t.Errorf("no names, no hint: err %v", err)
	}
	hint, _ := FromTableMap("db", "t", fullEvent(), nil)
	got, err := FromTableMap("db", "t", ev, hint)
	if err != nil || got.Columns[3].Name != "c" {
		t.Errorf("names from the hint: %v %v", err, got)
	}
	ev.ColumnType[3] = 99
	ev.ColumnName = fullEvent().ColumnName
	if _, err := FromTableMap("db", "t", ev, nil); err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("unknown type: err %v", err)
	}
}

func TestCheckTableMap(t *testing.T) {
	def, err := FromTableMap("db", "t", fullEvent(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mismatch := func(name string, mod func(*Table, *replication.TableMapEvent), wantIn ...string) {
		t.Helper()
		d, ev := def.Clone(), fullEvent()
		mod(d, ev)
		err := CheckTableMap(d, ev)
		var m *TableMapMismatchError
		if !errors.As(err, &m) {
			t.Errorf("%s: err %v, want *TableMapMismatchError", name, err)
			return
		}
		for _, s := range append(wantIn, "db.t") {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", name, err, s)
			}
		}
	}
	mismatch("count", func(d *Table, _ *replication.TableMapEvent) { d.Columns = d.Columns[:21] }, "21 columns", "22 columns")
	mismatch("name", func(d *Table, _ *replication.TableMapEvent) { d.Columns[2].Name = "w" }, "column 3", `"w"`, `"v"`)
	mismatch("family", func(d *Table, _ *replication.TableMapEvent) { d.Columns[1].Type = "varchar" }, "column 2", "varchar", "decimal")
	mismatch("temporal", func(d *Table, _ *replication.TableMapEvent) { d.Columns[10].Type = "int" }, "datetime")
	mismatch("enum", func(d *Table, _ *replication.TableMapEvent) { d.Columns[6].Type = "set" }, "enum")
	mismatch("table", func(_ *Table, ev *replication.TableMapEvent) { ev.Table = []byte("other") }, "db.other")

	ok := func(name string, mod func(*Table, *replication.TableMapEvent)) {
		t.Helper()
		d, ev := def.Clone(), fullEvent()
		mod(d, ev)
		if err := CheckTableMap(d, ev); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	ok("case-insensitive names", func(d *Table, _ *replication.TableMapEvent) { d.Columns[2].Name = "V" })
	ok("same family", func(d *Table, _ *replication.TableMapEvent) { d.Columns[0].Type = "bigint"; d.Columns[5].Type = "uuid" })
	ok("mariadb json", func(d *Table, _ *replication.TableMapEvent) { d.Columns[8].Type = "json" })
	ok("no names: only the count", func(d *Table, ev *replication.TableMapEvent) {
		ev.ColumnName = nil
		d.Columns[1].Type, d.Columns[2].Name = "varchar", "zz"
	})
}

func TestStringMeta(t *testing.T) {
	for _, tc := range []struct {
		meta   uint16
		real   byte
		length int
	}{
		{0xfe0a, mysql.MYSQL_TYPE_STRING, 10},
		{0xee90, mysql.MYSQL_TYPE_STRING, 400},
		{0xcefc, mysql.MYSQL_TYPE_STRING, 1020}, // char(255) utf8mb4
		{0xf701, mysql.MYSQL_TYPE_ENUM, 1},
		{0xf802, mysql.MYSQL_TYPE_SET, 2},
	} {
		real, length := stringMeta(tc.meta)
		if real != tc.real || length != tc.length {
			t.Errorf("stringMeta(%#x) = %d, %d; want %d, %d", tc.meta, real, length, tc.real, tc.length)
		}
	}
}
