package dumpconv

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/fstest"

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
