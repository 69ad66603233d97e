package dumpfile

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

const finishedMeta = "Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: binlog.000003\n\tPos: 1234\n\tGTID:0-1-5\n\nFinished dump at: 2026-11-29 08:47:06\n"

func TestRead(t *testing.T) {
	d, err := Read(fstest.MapFS{
		"metadata":               file(finishedMeta),
		"shop-schema-create.sql": file("CREATE DATABASE `shop`;"),
		"shop.orders-schema.sql": file(createT),
		"shop.orders.00000.sql":  file(""),
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Metadata.BinlogFile != "binlog.000003" || d.Metadata.BinlogPos != 1234 || len(d.Tables) != 1 || d.Tables[0].Name() != "shop.orders" {
		t.Errorf("dump %+v", d)
	}
	var bad *BadDumpError
	if _, err := Read(fstest.MapFS{}); !errors.Is(err, fs.ErrNotExist) || errors.As(err, &bad) {
		t.Errorf("no metadata: %v, want fs.ErrNotExist", err)
	}
	unfinished := fstest.MapFS{"metadata": file("Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: binlog.000003\n\tPos: 1234\n")}
	if _, err := Read(unfinished); !errors.Is(err, ErrUnfinished) || !errors.As(err, &bad) {
		t.Errorf("unfinished: %v, want a BadDumpError matching ErrUnfinished", err)
	}
	badPos := fstest.MapFS{"metadata": file("Started dump at: 2026-11-29 08:47:05\nSHOW MASTER STATUS:\n\tLog: b.000001\n\tPos: x12\n\nFinished dump at: 2026-11-29 08:47:06\n")}
	if _, err := Read(badPos); !errors.As(err, &bad) {
		t.Errorf("bad metadata: %v, want a BadDumpError", err)
	}
	badList := fstest.MapFS{"metadata": file(finishedMeta), "shop.t-schema.sql": file("SET NAMES binary;\nCREATE TABLE t (a int)\n")}
	if _, err := Read(badList); !errors.As(err, &bad) {
		t.Errorf("bad listing: %v, want a BadDumpError", err)
	}
}
