package schema

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
)

func TestCatalog(t *testing.T) {
	var c Catalog // the zero value works
	c.Put(&Table{Schema: "b", Name: "x"})
	c.Put(&Table{Schema: "a", Name: "y"})
	c.Put(&Table{Schema: "a", Name: "X"})
	c.Put(nil)
	if _, ok := c.Get("b", "X"); ok {
		t.Error("names must compare case-sensitively")
	}
	if tb, ok := c.Get("a", "X"); !ok || tb.Name != "X" {
		t.Error("Get a.X")
	}
	var names []string
	for _, tb := range c.Tables() {
		names = append(names, tb.QualifiedName())
	}
	if !slices.Equal(names, []string{"a.X", "a.y", "b.x"}) {
		t.Errorf("Tables() = %v", names)
	}
	cl := c.Clone()
	cl.Delete("a", "y")
	cl.SetSchemaCharset("a", "latin1")
	if _, ok := c.Get("a", "y"); !ok || c.Len() != 3 || cl.Len() != 2 {
		t.Error("Clone shares membership")
	}
	if c.SchemaCharset("a") != DefaultCharset || cl.SchemaCharset("a") != "latin1" {
		t.Error("Clone shares charsets")
	}
	c.SetServerCharset("UTF8")
	if c.SchemaCharset("zz") != "utf8mb3" {
		t.Errorf("server charset fallback %q", c.SchemaCharset("zz"))
	}
	c.Delete("nope", "nope")
	if len(c.SchemaTables("a")) != 2 {
		t.Error("SchemaTables")
	}
}

func TestSameShape(t *testing.T) {
	a := &Table{Columns: []Column{{Name: "a", Type: "int"}}, Key: []string{"a"}, KeyKind: KeyRow}
	b := a.Clone()
	b.Indexes = []Index{{Name: "i", Columns: []string{"a"}}}
	b.Charset = "latin1"
	if !SameShape(a, b) {
		t.Error("indexes and charset are not shape")
	}
	b.Columns[0].Unsigned = true
	if SameShape(a, b) || SameShape(a, nil) || !SameShape(nil, nil) {
		t.Error("SameShape")
	}
}

func TestCharsets(t *testing.T) {
	for id, want := range map[uint64]string{8: "latin1", 33: "utf8mb3", 45: "utf8mb4", 46: "utf8mb4", 63: "binary",
		83: "utf8mb3", 224: "utf8mb4", 255: "utf8mb4", 309: "utf8mb4", 1071: "latin1", 1070: "utf8mb4",
		2048: "utf8mb3", 2304: "utf8mb4", 2560: "ucs2", 3072: "utf32", 17: "", 5000: ""} {
		if got := CharsetOfCollationID(id); got != want {
			t.Errorf("CharsetOfCollationID(%d) = %q, want %q", id, got, want)
		}
	}
	for name, want := range map[string]string{"utf8mb4_uca1400_ai_ci": "utf8mb4", "utf8_general_ci": "utf8mb3",
		"utf8mb3_bin": "utf8mb3", "latin1_swedish_ci": "latin1", "binary": "binary", "utf16le_bin": "utf16le",
		"uca1400_ai_ci": "", "ucs2_general_ci": "ucs2"} {
		if got := CharsetOfCollation(name); got != want {
			t.Errorf("CharsetOfCollation(%q) = %q, want %q", name, got, want)
		}
	}
	if CharsetMaxLen("utf8") != 3 || CharsetMaxLen("nope") != 0 {
		t.Error("CharsetMaxLen")
	}
}

func TestParseEnumLabels(t *testing.T) {
	for in, want := range map[string][]string{
		"enum('a','b')":               {"a", "b"},
		"set('x')":                    {"x"},
		`enum('it''s','back\\slash')`: {"it's", `back\slash`},
		"ENUM( 'a,b' , ')' )":         {"a,b", ")"},
		"enum('')":                    {""},
		"enum('a','b') CHARACTER SET": {"a", "b"},
	} {
		got, err := ParseEnumLabels(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseEnumLabels(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"int(11)", "enum('a'", "enum(a)", "enum('a' 'b')"} {
		if _, err := ParseEnumLabels(in); err == nil {
			t.Errorf("ParseEnumLabels(%q) accepted", in)
		}
	}
}

func TestColumnFromInfoSchema(t *testing.T) {
	ns := func(vals ...string) []sql.NullString {
		out := make([]sql.NullString, len(vals))
		for i, v := range vals {
			out[i] = sql.NullString{String: v, Valid: v != "NULL"}
		}
		return out
	}
	for _, tc := range []struct {
		row  []sql.NullString
		want Column
	}{
		{ns("a", "bigint", "bigint(20) unsigned", "NO", "NULL", "20", "0", "NULL", "NULL"), Column{Name: "a", Type: "bigint", Unsigned: true}},
		{ns("b", "varchar", "varchar(255)", "YES", "255", "NULL", "NULL", "NULL", "utf8"), Column{Name: "b", Type: "varchar", Length: 255, Charset: "utf8mb3", Nullable: true}},
		{ns("c", "decimal", "decimal(65,30) unsigned", "YES", "NULL", "65", "30", "NULL", "NULL"), Column{Name: "c", Type: "decimal", Unsigned: true, Precision: 65, Scale: 30, Nullable: true}},
		{ns("d", "bit", "bit(64)", "YES", "NULL", "64", "NULL", "NULL", "NULL"), Column{Name: "d", Type: "bit", Length: 64, Nullable: true}},
		{ns("e", "datetime", "datetime(6)", "YES", "NULL", "NULL", "NULL", "6", "NULL"), Column{Name: "e", Type: "datetime", FSP: 6, Nullable: true}},
		{ns("f", "enum", "enum('x','y''z')", "YES", "3", "NULL", "NULL", "NULL", "latin1"), Column{Name: "f", Type: "enum", Elems: []string{"x", "y'z"}, Charset: "latin1", Nullable: true}},
		{ns("g", "uuid", "uuid", "YES", "NULL", "NULL", "NULL", "NULL", "NULL"), Column{Name: "g", Type: "uuid", Nullable: true}},
		{ns("h", "binary", "binary(16)", "YES", "16", "NULL", "NULL", "NULL", "NULL"), Column{Name: "h", Type: "binary", Length: 16, Nullable: true}},
		{ns("i", "point", "point", "YES", "NULL", "NULL", "NULL", "NULL", "NULL"), Column{Name: "i", Type: "point", Nullable: true}},
	} {
		got, err := columnFromInfoSchema(tc.row)
		if err != nil || jsonOf(got) != jsonOf(tc.want) {
			t.Errorf("columnFromInfoSchema(%s):\n got %s %v\nwant %s", tc.want.Name, jsonOf(got), err, jsonOf(tc.want))
		}
	}
	if _, err := columnFromInfoSchema(ns("x", "enum", "enum(", "YES", "NULL", "NULL", "NULL", "NULL", "NULL")); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("bad enum: %v", err)
	}
}

func TestSchemaFilterAndVersioning(t *testing.T) {
	w, args := schemaFilter("S", nil)
	if w != "S NOT IN (?,?,?,?)" || len(args) != 4 {
		t.Errorf("all schemas: %s %v", w, args)
	}
	w, args = schemaFilter("S", []string{"a", "b"})
	if w != "S IN (?,?)" || len(args) != 2 {
		t.Errorf("two schemas: %s %v", w, args)
	}
	if got := versioningEnd("CREATE TABLE `t` (\n `id` int, `s` timestamp(6) GENERATED ALWAYS AS ROW START INVISIBLE,\n `e` timestamp(6) GENERATED ALWAYS AS ROW END INVISIBLE,\n PERIOD FOR SYSTEM_TIME (`s`, `e`)) WITH SYSTEM VERSIONING"); got != "e" {
		t.Errorf("explicit row end %q", got)
	}
	if got := versioningEnd("CREATE TABLE `t` (`id` int) WITH SYSTEM VERSIONING"); got != "" {
		t.Errorf("implicit row end %q", got)
	}
}

func TestGeneratedColumns(t *testing.T) {
	cat := NewCatalog()
	if _, err := ApplyDDL(cat, "app", "CREATE TABLE g (id INT PRIMARY KEY, a INT, s INT AS (a*2) STORED, "+
		"p INT AS (a*3) PERSISTENT, v INT GENERATED ALWAYS AS (a+1) VIRTUAL, w VARCHAR(10) AS (CONCAT('x',a)), b INT)"); err != nil {
		t.Fatal(err)
	}
	def, _ := cat.Get("app", "g")
	var kinds []string
	for _, c := range def.Columns {
		kinds = append(kinds, c.Name+":"+c.Generated)
	}
	if got := strings.Join(kinds, " "); got != "id: a: s:stored p:stored v:virtual w:virtual b:" {
		t.Fatalf("generated kinds %s", got)
	}
	st, err := def.Stored()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(st.ColumnNames(), ","); got != "id,a,b" || len(st.Derived) != 4 || !st.IsDerived("V") || st.IsDerived("a") {
		t.Fatalf("stored %s, derived %+v", got, st.Derived)
	}
	if len(def.Columns) != 7 {
		t.Fatal("Stored changed its receiver")
	}
	if SameShape(def, st) {
		t.Fatal("a definition and its stored form have the same shape")
	}
	again, _ := def.Stored()
	if !SameShape(st, again) {
		t.Fatal("Stored is not deterministic")
	}
	// A key on a generated column cannot be stored; a keyless table's key
	// becomes its stored columns.
	if _, err := ApplyDDL(cat, "app", "CREATE TABLE gk (a INT NOT NULL, u INT AS (a+1) STORED NOT NULL, UNIQUE KEY (u))"); err != nil {
		t.Fatal(err)
	}
	gk, _ := cat.Get("app", "gk")
	if _, err := gk.Stored(); gk.KeyKind == KeyUnique && (err == nil || !strings.Contains(err.Error(), `key column "u" is a generated column`)) {
		t.Fatalf("key on a generated column: %v", err)
	}
	if _, err := ApplyDDL(cat, "app", "CREATE TABLE gr (a INT, u INT AS (a+1) VIRTUAL)"); err != nil {
		t.Fatal(err)
	}
	gr, _ := cat.Get("app", "gr")
	sr, err := gr.Stored()
	if err != nil || gr.KeyKind != KeyRow || strings.Join(sr.Key, ",") != "a" {
		t.Fatalf("keyless: %+v %v", sr, err)
	}
	for extra, want := range map[string]string{"VIRTUAL GENERATED": GeneratedVirtual, "STORED GENERATED": GeneratedStored,
		"PERSISTENT GENERATED": GeneratedStored, "auto_increment": "", "": "", "DEFAULT_GENERATED": ""} {
		if got := generatedFromExtra(extra); got != want {
			t.Errorf("EXTRA %q: %q, want %q", extra, got, want)
		}
	}
}
