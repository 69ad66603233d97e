package throttle

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
