package restore

import (
	"strings"
	"testing"
	"time"
)

func TestNextChunkAimsAtChunkTime(t *testing.T) {
	l := Limits{ChunkTime: 100 * time.Millisecond}
	size := FirstChunk
	// A server that takes 50 µs a row: the size converges on 2000 rows.
	for range 30 {
		size = NextChunk(size, time.Duration(size)*50*time.Microsecond, l)
	}
	if size < 1900 || size > 2100 {
		t.Fatalf("size %d, want about 2000", size)
	}
	if got := NextChunk(1000, 10*time.Second, l); got < 500 || got > 510 {
		t.Fatalf("a very slow chunk halves the size at most: %d", got)
	}
	if got := NextChunk(1000, time.Microsecond, l); got != 1000*FastGrowth {
		t.Fatalf("a very fast chunk grows the size %d times at most: %d", FastGrowth, got)
	}
	if got := NextChunk(1000, 20*time.Millisecond, l); got != 5000 {
		t.Fatalf("a chunk at a fifth of the chunk time goes to the size that takes it: %d", got)
	}
	if got := NextChunk(1000, 50*time.Millisecond, l); got != 1500 {
		t.Fatalf("a chunk at half the chunk time moves half-way: %d", got)
	}
	// From FirstChunk, a server at 7 µs a row plus 8 ms a chunk reaches
	// 80% of the chunk time in 4 chunks and never passes it.
	size, n := FirstChunk, 0
	for took := 8*time.Millisecond + time.Duration(size)*7*time.Microsecond; took < 80*time.Millisecond; n++ {
		if took > l.ChunkTime {
			t.Fatalf("chunk %d of %d rows took %s, over the chunk time", n, size, took)
		}
		size = NextChunk(size, took, l)
		took = 8*time.Millisecond + time.Duration(size)*7*time.Microsecond
	}
	if n > 4 {
		t.Fatalf("%d chunks to reach 80%% of the chunk time", n)
	}
	if got := NextChunk(MaxChunk, time.Microsecond, l); got != MaxChunk {
		t.Fatalf("bounded: %d", got)
	}
	if got := NextChunk(1, time.Hour, l); got != MinChunk {
		t.Fatalf("bounded below: %d", got)
	}
}

func TestRateWait(t *testing.T) {
	if w := RateWait(1000, 500*time.Millisecond, 1000); w != 500*time.Millisecond {
		t.Fatalf("wait %s", w)
	}
	if w := RateWait(1000, 2*time.Second, 1000); w != 0 {
		t.Fatalf("below the rate: wait %s", w)
	}
	if w := RateWait(1000, 0, 0); w != 0 {
		t.Fatalf("no cap: wait %s", w)
	}
	if c := CapChunk(5000, 100); c != 100 {
		t.Fatalf("cap %d", c)
	}
}

func TestPauseReasons(t *testing.T) {
	l := Limits{MaxLag: time.Second, MaxLoad: 10}.WithDefaults()
	cases := []struct {
		s    Signals
		want string
	}{
		{Signals{}, ""},
		{Signals{Replicas: []ReplicaState{{Name: "r1", Running: true, Lag: time.Second}}}, ""},
		{Signals{Replicas: []ReplicaState{{Name: "r1", Running: true, Lag: 3 * time.Second}}}, "replica r1 lags 3s (max 1s)"},
		{Signals{Replicas: []ReplicaState{{Name: "r1"}}}, "replica r1 is not replicating"},
		{Signals{Replicas: []ReplicaState{{Name: "r1", Err: "connection refused"}}}, "cannot be asked"},
		{Signals{Throttle: 1, HasThrottle: true}, "throttle query returned 1"},
		{Signals{Throttle: 0, HasThrottle: true}, ""},
		{Signals{ThreadsRunning: 11}, "Threads_running 11 (max 10)"},
		{Signals{ThreadsRunning: 10}, ""},
	}
	for _, c := range cases {
		got := Pause(c.s, l)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Pause(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}

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
