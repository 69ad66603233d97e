package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dbtrail/dbtrail/internal/schema"
)

func TestArrowSchemaMapping(t *testing.T) {
	want := map[string]struct {
		dt    arrow.DataType
		mysql string
	}{
		"id": {arrow.PrimitiveTypes.Int32, "int"},
		"ti": {arrow.PrimitiveTypes.Int8, "tinyint"}, "tiu": {arrow.PrimitiveTypes.Uint8, "tinyint unsigned"},
		"si": {arrow.PrimitiveTypes.Int16, "smallint"}, "siu": {arrow.PrimitiveTypes.Uint16, "smallint unsigned"},
		"mi": {arrow.PrimitiveTypes.Int32, "mediumint"}, "miu": {arrow.PrimitiveTypes.Uint32, "mediumint unsigned"},
		"i": {arrow.PrimitiveTypes.Int32, "int"}, "iu": {arrow.PrimitiveTypes.Uint32, "int unsigned"},
		"bi": {arrow.PrimitiveTypes.Int64, "bigint"}, "biu": {arrow.PrimitiveTypes.Uint64, "bigint unsigned"},
		"y":     {arrow.PrimitiveTypes.Int16, "year"},
		"dec65": {arrow.BinaryTypes.String, "decimal(65,30)"}, "dec10": {arrow.BinaryTypes.String, "decimal(10,0)"},
		"f": {arrow.PrimitiveTypes.Float32, "float"}, "db": {arrow.PrimitiveTypes.Float64, "double"},
		"dt": {arrow.BinaryTypes.String, "date"}, "dtm": {arrow.BinaryTypes.String, "datetime(6)"},
		"ts": {arrow.BinaryTypes.String, "timestamp"}, "tm": {arrow.BinaryTypes.String, "time(6)"},
		"tm0": {arrow.BinaryTypes.String, "time"},
		"c":   {arrow.BinaryTypes.String, "char(10)"}, "vc": {arrow.BinaryTypes.String, "varchar(100)"},
		"tx": {arrow.BinaryTypes.String, "text"}, "l1": {arrow.BinaryTypes.String, "varchar(10)"},
		"en": {arrow.BinaryTypes.String, "enum('a','b','ç')"}, "st": {arrow.BinaryTypes.String, "set('x','y','z')"},
		"js": {arrow.BinaryTypes.String, "json"},
		"bn": {arrow.BinaryTypes.Binary, "binary(8)"}, "vb": {arrow.BinaryTypes.Binary, "varbinary(16)"},
		"bl": {arrow.BinaryTypes.Binary, "blob"}, "bt": {arrow.BinaryTypes.Binary, "bit(64)"},
		"bt5": {arrow.BinaryTypes.Binary, "bit(5)"}, "g": {arrow.BinaryTypes.Binary, "geometry"},
		"cb": {arrow.BinaryTypes.Binary, "char(4)"},
		"uu": {arrow.BinaryTypes.String, "uuid"}, "i6": {arrow.BinaryTypes.String, "inet6"},
		"i4": {arrow.BinaryTypes.String, "inet4"},
	}
	tbl := allTypes()
	sc, err := ArrowSchema(tbl)
	if err != nil {
		t.Fatal(err)
	}
	if sc.NumFields() != len(tbl.Columns) || len(want) != len(tbl.Columns) {
		t.Fatalf("%d fields, %d columns, %d expectations", sc.NumFields(), len(tbl.Columns), len(want))
	}
	for i, f := range sc.Fields() {
		w, ok := want[f.Name]
		if !ok || f.Name != tbl.Columns[i].Name {
			t.Fatalf("field %d is %q", i, f.Name)
		}
		if !arrow.TypeEqual(f.Type, w.dt) || !f.Nullable {
			t.Errorf("%s: %s nullable=%v, want nullable %s", f.Name, f.Type, f.Nullable, w.dt)
		}
		if v, _ := f.Metadata.GetValue(MetaMySQLType); v != w.mysql {
			t.Errorf("%s: mysql type %q, want %q", f.Name, v, w.mysql)
		}
	}
}

func TestArrowSchemaRefusesUnknownType(t *testing.T) {
	_, err := ArrowSchema(&schema.Table{Schema: "s", Name: "t", Columns: []schema.Column{{Name: "w", Type: "widget"}}})
	if err == nil || !strings.Contains(err.Error(), "s.t") || !strings.Contains(err.Error(), `"widget"`) {
		t.Fatalf("got %v", err)
	}
}

func TestNewSnapshotIDUnique(t *testing.T) {
	now := mustTime(t, "2026-11-29T06:15:00.7Z")
	taken := map[string]bool{}
	exists := func(id string) (bool, error) { return taken[id], nil }
	var ids []string
	for range 5 {
		id, err := NewSnapshotID(now, exists)
		if err != nil {
			t.Fatal(err)
		}
		if taken[id] {
			t.Fatalf("id %s reused", id)
		}
		taken[id] = true
		ids = append(ids, id)
	}
	want := []string{"20261129T061500Z", "20261129T061501Z", "20261129T061502Z", "20261129T061503Z", "20261129T061504Z"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("ids %v", ids)
	}
	if _, err := ParseSnapshotID("20261129T061500"); err == nil {
		t.Error("malformed id accepted")
	}
	// Against a folder: a published id and a staging id are both taken.
	dir := t.TempDir()
	b, err := NewBuilder(dir, "20261129T061500Z")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := NewSnapshotID(now, ExistsIn(dir)); err != nil || id != "20261129T061501Z" {
		t.Fatalf("staging id reused: %s, %v", id, err)
	}
	if err := b.Publish(Manifest{Source: "s"}); err != nil {
		t.Fatal(err)
	}
	if id, err := NewSnapshotID(now, ExistsIn(dir)); err != nil || id != "20261129T061501Z" {
		t.Fatalf("published id reused: %s, %v", id, err)
	}
}

// TestNewSnapshotIDInAFileRefuses: a source folder below a regular file
// cannot be looked into; the id search fails with the path instead of
// taking every id for taken (it searched forever).
func TestNewSnapshotIDInAFileRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "backups")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A guard against the old endless search, not a bound on its time.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := NewSnapshotID(time.Now(), ExistsIn(filepath.Join(file, "main")))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.ENOTDIR) || !strings.Contains(err.Error(), file) {
			t.Fatalf("got %v, want ENOTDIR naming %s", err, file)
		}
	case <-ctx.Done():
		t.Fatal("the id search did not end")
	}
}
