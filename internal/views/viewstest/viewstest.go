// Package viewstest publishes small snapshots without a server for the
// tests of the views and of `dbtrail query`: each table from its CREATE
// TABLE statement and rows in the SQL text form, written by the real
// snapshot writers as a full backup writes them. Test code only.
package viewstest

import (
	"io"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Table is one table of a test snapshot.
type Table struct {
	// Schema is the database the table is created in.
	Schema string
	// Create is its CREATE TABLE statement.
	Create string
	// Rows are in the SQL text form of snapshot.TableWriter.AppendSQL: a
	// string is a value, nil is NULL.
	Rows [][]any
}

// Publish publishes a snapshot of tables into the source folder srcDir (a
// new id, one second past the newest when taken) with each table's file and
// empty chain start, makes it current and returns its id.
func Publish(t testing.TB, srcDir string, tables ...Table) string {
	t.Helper()
	id, err := snapshot.NewSnapshotID(time.Now(), snapshot.ExistsIn(srcDir))
	if err != nil {
		t.Fatal(err)
	}
	b, err := snapshot.NewBuilder(srcDir, id)
	if err != nil {
		t.Fatal(err)
	}
	m := snapshot.Manifest{Source: "main"}
	for _, tb := range tables {
		m.Tables = append(m.Tables, write(t, b, tb))
	}
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	return id
}

// write writes one table's file and chain start into b.
func write(t testing.TB, b *snapshot.Builder, tb Table) snapshot.ManifestTable {
	t.Helper()
	cat := schema.NewCatalog()
	if _, err := schema.ApplyDDL(cat, tb.Schema, tb.Create); err != nil {
		t.Fatalf("%s: %v", tb.Create, err)
	}
	tables := cat.Tables()
	if len(tables) != 1 {
		t.Fatalf("%s: creates %d tables", tb.Create, len(tables))
	}
	def := tables[0]
	rel, err := snapshot.TableFile(def.Schema, def.Name)
	if err != nil {
		t.Fatal(err)
	}
	var res snapshot.WriteResult
	meta := snapshot.FooterMeta{CreateTable: tb.Create, SnapshotID: b.ID(), Source: "main"}
	_, err = b.WriteFile(rel, func(w io.Writer) error {
		tw, err := snapshot.NewTableWriter(w, def, meta, snapshot.WriterOptions{})
		if err != nil {
			return err
		}
		for _, r := range tb.Rows {
			if err := tw.AppendSQL(Values(r...)); err != nil {
				return err
			}
		}
		res, err = tw.Close()
		return err
	})
	if err != nil {
		t.Fatalf("write %s: %v", rel, err)
	}
	mt := snapshot.ManifestTable{Schema: def.Schema, Table: def.Name, File: rel, Rows: res.Rows,
		Fingerprint: res.Fingerprint, Kind: snapshot.KindFull, Origin: snapshot.OriginDump}
	if !snapshot.FullOnly(def) {
		if mt.Chain, err = snapshot.WriteEmptyChainStart(b, def); err != nil {
			t.Fatal(err)
		}
		mt.Kind = snapshot.KindDelta
	}
	return mt
}

// Values returns a row in the SQL text form: a string is its bytes, nil is
// NULL.
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
