package restore

import (
	"strings"
	"testing"
)

func TestRenameCreate(t *testing.T) {
	cases := map[string]string{
		"CREATE TABLE `orders` (\n  `id` int NOT NULL)":                   "CREATE TABLE `s2`.`t2` (\n  `id` int NOT NULL)",
		"/* rebuilt */ CREATE TABLE `o``x` (a int)":                       "/* rebuilt */ CREATE TABLE `s2`.`t2` (a int)",
		"create table if not exists plain_1 (a int)":                      "CREATE TABLE `s2`.`t2` (a int)",
		"CREATE TABLE `shop`.`orders` (a int) ENGINE=InnoDB":              "CREATE TABLE `s2`.`t2` (a int) ENGINE=InnoDB",
		"CREATE TABLE `a` (b int, FOREIGN KEY (b) REFERENCES `p` (`id`))": "CREATE TABLE `s2`.`t2` (b int, FOREIGN KEY (b) REFERENCES `p` (`id`))",
	}
	for in, want := range cases {
		got, err := RenameCreate(in, "s2", "t2")
		if err != nil || got != want {
			t.Errorf("RenameCreate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"CREATE VIEW v AS SELECT 1", "CREATE TABLE `x (a int)", "/* open CREATE TABLE t (a int)"} {
		if _, err := RenameCreate(bad, "s", "t"); err == nil {
			t.Errorf("RenameCreate(%q) accepted", bad)
		}
	}
}

func TestNames(t *testing.T) {
	if got := TargetSchema("", "shop"); got != "shop" {
		t.Fatal(got)
	}
	if got := TargetSchema("{schema}_restored", "shop"); got != "shop_restored" {
		t.Fatal(got)
	}
	if got := TargetSchema("scratch", "shop"); got != "scratch" {
		t.Fatal(got)
	}
	long := strings.Repeat("é", 40) // 80 bytes
	for _, n := range []string{LoadTable(long), OldTable(long), LoadTable("orders")} {
		if len(n) > MaxIdent || CheckIdent("t", n) != nil {
			t.Fatalf("name %q (%d bytes)", n, len(n))
		}
	}
	if LoadTable(long) == LoadTable(long+"x") || LoadTable("orders") != "_dbtrail_new_orders" {
		t.Fatal("names collide or changed")
	}
	if ID("main", 5, ModeNew, "") == ID("main", 6, ModeNew, "") || ID("main", 5, ModeNew, "") != ID("main", 5, ModeNew, "") {
		t.Fatal("ids")
	}
	c := Checkpoint{CutSeq: 5, Fingerprint: "3:00", RowsTotal: 3}
	if c.Matches(5, "3:00", 3) != nil || c.Matches(6, "3:00", 3) == nil {
		t.Fatal("Matches")
	}
}

func TestUnnameForeignKeys(t *testing.T) {
	in := "CREATE TABLE `c` (\n  `id` int,\n  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `p` (`id`),\n  CONSTRAINT `chk` CHECK (`id` > 0),\n  constraint fk2 foreign key (`q`) REFERENCES `q` (`id`)\n)"
	want := "CREATE TABLE `c` (\n  `id` int,\n  FOREIGN KEY (`p`) REFERENCES `p` (`id`),\n  CONSTRAINT `chk` CHECK (`id` > 0),\n  foreign key (`q`) REFERENCES `q` (`id`)\n)"
	if got := UnnameForeignKeys(in); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
