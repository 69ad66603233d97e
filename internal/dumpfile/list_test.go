package dumpfile

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

const createT = "/*!40101 SET NAMES binary*/;\nCREATE TABLE `t` (\n  `a` int\n) ENGINE=InnoDB;\n"

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestListTables(t *testing.T) {
	fsys := fstest.MapFS{
		"metadata":                     file("..."),
		"shop-schema-create.sql":       file("CREATE DATABASE `shop`;"),
		"shop.orders-schema.sql":       file(createT),
		"shop.orders.00010.sql":        file(""),
		"shop.orders.00002.sql":        file(""),
		"shop.orders.00000.sql":        file(""),
		"shop.orders.00001.sql":        file(""),
		"shop.items-schema.sql":        file(createT),
		"shop.items.sql":               file(""),
		"shop.empty-schema.sql":        file(createT),
		"shop.v-schema.sql":            file("/*!40101 SET NAMES binary*/;\nCREATE TABLE `v`(\n`id` int\n)ENGINE=MyISAM;\n"),
		"shop.v-schema-view.sql":       file("CREATE VIEW `v` AS select 1;"),
		"shop.hv-schema.sql":           file("CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW `hv` AS select 1;"),
		"shop.new-schema.sql":          file(createT),
		"shop.new.00000.00002.sql":     file(""),
		"shop.new.00000.00001.sql":     file(""),
		"shop.new.00001.sql":           file(""),
		"shop.new-metadata":            file(""),
		"shop.new-schema-triggers.sql": file(""),
		"shop-schema-post.sql":         file(""),
		"my.db-schema-create.sql":      file("CREATE DATABASE `my.db`;"),
		"my.db.dotted.name-schema.sql": file(createT),
		"my.db.dotted.name.00000.sql":  file(""),
		"my.db.t.12-schema.sql":        file(createT), // a table named "t.12"
		"my.db.t.12.sql":               file(""),
		"nodb.t-schema.sql":            file(createT),
		"nodb.t.sql":                   file(""),
		"README":                       file("not a dump file"),
		"sub/shop.orders.00099.sql":    file(""), // not the top level
	}
	tables, views, err := ListTables(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []TableFiles{
		{Schema: "my.db", Table: "dotted.name", DatabaseFile: "my.db-schema-create.sql", SchemaFile: "my.db.dotted.name-schema.sql", DataFiles: []string{"my.db.dotted.name.00000.sql"}},
		{Schema: "my.db", Table: "t.12", DatabaseFile: "my.db-schema-create.sql", SchemaFile: "my.db.t.12-schema.sql", DataFiles: []string{"my.db.t.12.sql"}},
		{Schema: "nodb", Table: "t", SchemaFile: "nodb.t-schema.sql", DataFiles: []string{"nodb.t.sql"}},
		{Schema: "shop", Table: "empty", DatabaseFile: "shop-schema-create.sql", SchemaFile: "shop.empty-schema.sql"},
		{Schema: "shop", Table: "items", DatabaseFile: "shop-schema-create.sql", SchemaFile: "shop.items-schema.sql", DataFiles: []string{"shop.items.sql"}},
		{Schema: "shop", Table: "new", DatabaseFile: "shop-schema-create.sql", SchemaFile: "shop.new-schema.sql",
			DataFiles: []string{"shop.new.00000.00001.sql", "shop.new.00000.00002.sql", "shop.new.00001.sql"}},
		{Schema: "shop", Table: "orders", DatabaseFile: "shop-schema-create.sql", SchemaFile: "shop.orders-schema.sql",
			DataFiles: []string{"shop.orders.00000.sql", "shop.orders.00001.sql", "shop.orders.00002.sql", "shop.orders.00010.sql"}},
	}
	if !reflect.DeepEqual(tables, want) {
		t.Errorf("tables:\n got %+v\nwant %+v", tables, want)
	}
	wantViews := []TableFiles{
		{Schema: "shop", Table: "hv", DatabaseFile: "shop-schema-create.sql", SchemaFile: "shop.hv-schema.sql", IsView: true},
		{Schema: "shop", Table: "v", DatabaseFile: "shop-schema-create.sql", SchemaFile: "shop.v-schema-view.sql", IsView: true},
	}
	if !reflect.DeepEqual(views, wantViews) {
		t.Errorf("views:\n got %+v\nwant %+v", views, wantViews)
	}
}

func TestListTablesErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		files []string
		msg   string
	}{
		"gzip":            {[]string{"shop.t-schema.sql", "shop.t.00000.sql.gz"}, "shop.t.00000.sql.gz: compressed dump files are not supported, run mydumper without --compress"},
		"zstd":            {[]string{"shop.t-schema.sql.zst"}, "not supported, run mydumper without --compress"},
		"load data":       {[]string{"shop.t-schema.sql", "shop.t.00000.dat"}, "LOAD DATA"},
		"no schema file":  {[]string{"shop.t.00000.sql"}, "shop.t.00000.sql: data without a schema file for shop.t"},
		"data for a view": {[]string{"shop.v-schema-view.sql", "shop.v-schema.sql", "shop.v.sql"}, "which is a view"},
		"unplaceable":     {[]string{"weird.sql"}, "weird.sql: not a mydumper file name"},
		"view only":       {[]string{"shop.t-schema-view.sql", "shop.u.sql"}, "data without a schema file"},
	} {
		fsys := fstest.MapFS{}
		for _, f := range tc.files {
			fsys[f] = file(createT)
		}
		if _, _, err := ListTables(fsys); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want it to contain %q", name, err, tc.msg)
		}
	}
	bad := fstest.MapFS{"shop.t-schema.sql": file("SET NAMES binary;\nCREATE TABLE t (a int)\n")}
	if _, _, err := ListTables(bad); err == nil || !strings.Contains(err.Error(), "shop.t-schema.sql:2: statement without a closing ';'") {
		t.Errorf("bad schema file: err = %v", err)
	}
}

func TestReadCreateTable(t *testing.T) {
	const table = "CREATE TABLE `t` (\n  `a` varchar(10) DEFAULT 'x;y' COMMENT 'it''s -- not a comment',\n  `b` int /* inline; */\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	for _, in := range []string{
		table + ";",
		"/*!40101 SET NAMES binary*/;\n/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n\n/*!40103 SET TIME_ZONE='+00:00' */;\n" + table + ";\n",
		"-- comment; with semicolon\n# another;\n/* block; */\nSET @x = 'a;b';\nDROP TABLE IF EXISTS `t`;\n" + table + "  ;\n\n-- trailing\n",
	} {
		got, err := ReadCreateTable(strings.NewReader(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got != table {
			t.Errorf("got %q\nwant %q", got, table)
		}
	}
	for in, msg := range map[string]string{
		"":                           "no CREATE TABLE",
		"SET NAMES binary;":          "no CREATE TABLE",
		"CREATE VIEW v AS select 1;": "CREATE VIEW, not CREATE TABLE",
		"CREATE TABLE a (x int);\nCREATE TABLE b (x int);": "schema file:2: a second CREATE",
		"SET a=1;\nINSERT INTO t VALUES (1);":              "schema file:2: unexpected INSERT statement",
		"CREATE TABLE a (x varchar(3) DEFAULT 'abc);":      "unterminated quoted text",
		"CREATE TABLE a (x int) /* open;":                  "unterminated /* comment",
	} {
		if _, err := ReadCreateTable(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err = %v, want it to contain %q", in, err, msg)
		}
	}
}
