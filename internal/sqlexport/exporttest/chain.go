package exporttest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Change is one row of a chain pair's .upserts file: Op snapshot.OpUpsert
// with the newest version of a changed or added row, or snapshot.OpDelete
// with a deleted row's last values. Row is in the SQL text form of
// snapshot.TableReader.Next; Values builds one.
type Change struct {
	Op  string
	Row []rowimage.Cell
}

// Values returns a row in the SQL text form: nil is NULL, a string its
// bytes (an empty string is the empty value).
func Values(vals ...any) []rowimage.Cell {
	row := make([]rowimage.Cell, len(vals))
	for i, v := range vals {
		row[i] = rowimage.NullCell()
		if s, ok := v.(string); ok {
			row[i] = rowimage.TextCell([]byte(s))
		}
	}
	return row
}

// TableRows returns copies of the rows of the table file of schema.table in
// snap, in file order.
func TableRows(t testing.TB, snap *snapshot.Snapshot, schemaName, table string) [][]rowimage.Cell {
	t.Helper()
	r, err := snap.OpenTable(schemaName, table)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows [][]rowimage.Cell
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		cp := make([]rowimage.Cell, len(row))
		for i, v := range row {
			cp[i] = rowimage.Cell{Null: v.Null, Text: append([]byte{}, v.Text...)}
		}
		rows = append(rows, cp)
	}
}

// AddChainPair writes the chain pair <table>.<entry>.posdel/.upserts of
// schema.table into snap (a copy) with the real writers, as a refresh
// would, lists it last in the table's chain in the manifest (with the files'
// digests) and reopens the snapshot. The .posdel names every row of the
// table file whose key is the key of a change; the .upserts holds changes in
// order, each with its key (rowimage.KeyFromImage).
func AddChainPair(t testing.TB, snap *snapshot.Snapshot, schemaName, table, entry string, changes []Change) *snapshot.Snapshot {
	t.Helper()
	mt, ok := snap.Manifest.Table(schemaName, table)
	if !ok {
		t.Fatalf("snapshot has no table %s.%s", schemaName, table)
	}
	foot, err := snapshot.ReadFooter(snap.Path(mt.File))
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(changes))
	changed := map[string]bool{}
	for i, c := range changes {
		keys[i] = rowKey(t, foot.Table, c.Row)
		changed[keys[i]] = true
	}
	var dead []int64
	for n, row := range TableRows(t, snap, schemaName, table) {
		if changed[rowKey(t, foot.Table, row)] {
			dead = append(dead, int64(n))
		}
	}
	m := snap.Manifest
	m.Files = maps.Clone(m.Files)
	m.Tables = slices.Clone(m.Tables)
	i := slices.IndexFunc(m.Tables, func(x snapshot.ManifestTable) bool { return x.Schema == schemaName && x.Table == table })
	m.Tables[i].Chain = slices.Clone(m.Tables[i].Chain)
	add := func(suffix string, write func(w io.Writer) error) {
		rel, err := snapshot.ChainFile(schemaName, table, entry, suffix)
		if err != nil {
			t.Fatal(err)
		}
		m.Files[rel] = writeDigested(t, snap.Path(rel), write)
		m.Tables[i].Chain = append(m.Tables[i].Chain, rel)
	}
	add("posdel", func(w io.Writer) error {
		pw, err := snapshot.NewPosdelWriter(w)
		if err != nil {
			return err
		}
		for _, n := range dead {
			if err := pw.Append(n); err != nil {
				return err
			}
		}
		_, err = pw.Close()
		return err
	})
	add("upserts", func(w io.Writer) error {
		meta := snapshot.FooterMeta{CreateTable: foot.CreateTable, Position: m.Position, SnapshotID: m.SnapshotID, Source: m.Source}
		uw, err := snapshot.NewUpsertsWriter(w, foot.Table, meta, snapshot.WriterOptions{})
		if err != nil {
			return err
		}
		for i, c := range changes {
			if err := uw.AppendSQL(c.Row, keys[i], c.Op); err != nil {
				return err
			}
		}
		_, err = uw.Close()
		return err
	})
	return rewriteManifest(t, snap, m)
}

// rowKey is the key of row (SQL text form) of tbl, as rowimage.Key gives it.
func rowKey(t testing.TB, tbl *schema.Table, row []rowimage.Cell) string {
	t.Helper()
	img, err := rowimage.SQLImage(tbl, row)
	if err != nil {
		t.Fatal(err)
	}
	key, err := rowimage.KeyFromImage(tbl, img)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// writeDigested writes the file path with write and returns its digest.
func writeDigested(t testing.TB, path string, write func(w io.Writer) error) digest.Digest {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatalf("write %s: %v", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return digest.Digest{SHA256: hex.EncodeToString(sum[:]), Size: int64(buf.Len())}
}

// rewriteManifest replaces the manifest of snap with m and reopens it.
func rewriteManifest(t testing.TB, snap *snapshot.Snapshot, m snapshot.Manifest) *snapshot.Snapshot {
	t.Helper()
	enc, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap.Dir, snapshot.ManifestName), enc, 0o644); err != nil {
		t.Fatal(err)
	}
	cp, err := snapshot.OpenSnapshot(snap.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// ChainLive changes the live fixture tables (one session, sql_log_bin off so
// that the source's binlog position stays the snapshot's) as Chain changes a
// snapshot's.
const ChainLive = `SET SESSION sql_log_bin = 0; SET SESSION sql_mode = ''; SET time_zone = '+00:00';
DELETE FROM fx.ckey WHERE k = 'b''q' AND n = 0;
UPDATE fx.ckey SET v = 'changed' WHERE k = 'a' AND n = 1;
INSERT INTO fx.ckey VALUES ('new', 5, 'again');
DELETE FROM fx.ckey WHERE k = '😀' AND n = 2;
DELETE FROM fx.alltypes WHERE id = 1;
UPDATE fx.alltypes SET vc = 'chained' WHERE id = 4;
CREATE TEMPORARY TABLE fx.copy LIKE fx.alltypes;
INSERT INTO fx.copy SELECT * FROM fx.alltypes WHERE id = 3;
UPDATE fx.copy SET id = 6;
INSERT INTO fx.alltypes SELECT * FROM fx.copy;
DROP TEMPORARY TABLE fx.copy;
SET SESSION sql_log_bin = 1`

// Chain adds to snap (a copy of a snapshot of the fixture tables) the chain
// pairs of a refresh that saw ChainLive, and reopens it:
//   - fx.ckey 000001: key ["b'q",0] deleted, ["a",1] updated, ["new",5]
//     added; 000002: ["new",5] updated again, ["😀",2] deleted (3 rows at
//     the snapshot, 4 in the table file);
//   - fx.alltypes 000001: id 1 (empty values) deleted, id 4 updated (vc), id 6
//     added as a copy of id 3 (5 rows).
func Chain(t testing.TB, snap *snapshot.Snapshot) *snapshot.Snapshot {
	t.Helper()
	u, d := snapshot.OpUpsert, snapshot.OpDelete
	snap = AddChainPair(t, snap, Schema, "ckey", "000001", []Change{
		{d, Values("b'q", "0", "quote")},
		{u, Values("a", "1", "changed")},
		{u, Values("new", "5", "x")},
	})
	snap = AddChainPair(t, snap, Schema, "ckey", "000002", []Change{
		{u, Values("new", "5", "again")},
		{d, Values("😀", "2", nil)},
	})
	rows := map[string][]rowimage.Cell{}
	for _, row := range TableRows(t, snap, Schema, "alltypes") {
		rows[string(row[0].Text)] = row
	}
	foot, err := snapshot.ReadFooter(snap.Path(Schema + "/alltypes.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	vc := slices.Index(foot.Table.ColumnNames(), "vc")
	updated := slices.Clone(rows["4"])
	updated[vc] = rowimage.TextCell([]byte("chained"))
	added := slices.Clone(rows["3"])
	added[0] = rowimage.TextCell([]byte("6"))
	return AddChainPair(t, snap, Schema, "alltypes", "000001", []Change{{d, rows["1"]}, {u, updated}, {u, added}})
}
