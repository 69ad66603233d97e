package binlogpos

import "testing"

func TestCompareUsesFileSequenceNotText(t *testing.T) {
	cases := []struct {
		a, b Position
		want int
	}{
		{Position{File: "binlog.000009", Pos: 900}, Position{File: "binlog.000010", Pos: 4}, -1},
		{Position{File: "binlog.999999", Pos: 4}, Position{File: "binlog.1000000", Pos: 4}, -1},
		{Position{File: "binlog.000010", Pos: 500}, Position{File: "binlog.000010", Pos: 400}, 1},
		{Position{File: "binlog.000010", Pos: 500}, Position{File: "binlog.000010", Pos: 500}, 0},
	}
	for _, c := range cases {
		got, err := Compare(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d", c.a, c.b, got, err, c.want)
		}
	}
	if _, err := Compare(Position{File: "binlog", Pos: 4}, Position{File: "binlog.000001", Pos: 4}); err == nil {
		t.Error("a file without numeric extension must be an error")
	}
}

func TestParse(t *testing.T) {
	p, err := Parse("mysql-bin.000003:1234")
	if err != nil || p.File != "mysql-bin.000003" || p.Pos != 1234 {
		t.Fatalf("Parse = %v, %v", p, err)
	}
	for _, bad := range []string{"", "x", "binlog.000001:", "binlog.000001:abc", "binlog:12"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) must fail", bad)
		}
	}
}
