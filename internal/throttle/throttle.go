// Package throttle decides how fast a load writes: its limits, when it
// pauses on the target's signals and how large its next chunk is. Pure: the
// signals are read by internal/restore.
package throttle

import (
	"fmt"
	"math"
	"time"
)

// Limits are a load's throttle settings (the flags of `dbtrail restore`).
type Limits struct {
	// ChunkTime is the time one chunk's transaction aims at (--chunk-time).
	ChunkTime time.Duration
	// MaxLag pauses the load while a replica lags more (--max-lag).
	MaxLag time.Duration
	// MaxLoad pauses the load while the target's Threads_running is above
	// it (--max-load); 0 is no limit.
	MaxLoad int
	// MaxRowsPerSecond caps the rate of one table's load; 0 is no cap.
	MaxRowsPerSecond int
}

// Defaults of Limits, as pt-online-schema-change has them.
const (
	DefaultChunkTime = 500 * time.Millisecond
	DefaultMaxLag    = time.Second
	DefaultMaxLoad   = 25
)

// Bounds of Limits: a caller's values outside them are refused (Check).
const (
	MinChunkTime        = 10 * time.Millisecond
	MaxChunkTime        = time.Minute
	MaxMaxLag           = 24 * time.Hour
	MaxMaxLoad          = 100000
	MaxMaxRowsPerSecond = 100_000_000
)

// Check refuses a limit outside its bounds (0 is each one's default), naming
// the flag.
func (l Limits) Check() error {
	switch {
	case l.ChunkTime != 0 && (l.ChunkTime < MinChunkTime || l.ChunkTime > MaxChunkTime):
		return fmt.Errorf("--chunk-time %s: want %s to %s", l.ChunkTime, MinChunkTime, MaxChunkTime)
	case l.MaxLag < 0 || l.MaxLag > MaxMaxLag:
		return fmt.Errorf("--max-lag %s: want 0 (default) to %s", l.MaxLag, MaxMaxLag)
	case l.MaxLoad < 0 || l.MaxLoad > MaxMaxLoad:
		return fmt.Errorf("--max-load %d: want 0 (no limit) to %d", l.MaxLoad, MaxMaxLoad)
	case l.MaxRowsPerSecond < 0 || l.MaxRowsPerSecond > MaxMaxRowsPerSecond:
		return fmt.Errorf("--max-rows-per-second %d: want 0 (no cap) to %d", l.MaxRowsPerSecond, MaxMaxRowsPerSecond)
	}
	return nil
}

// WithDefaults fills the zero ChunkTime and MaxLag.
func (l Limits) WithDefaults() Limits {
	if l.ChunkTime <= 0 {
		l.ChunkTime = DefaultChunkTime
	}
	if l.MaxLag <= 0 {
		l.MaxLag = DefaultMaxLag
	}
	return l
}

// ReplicaState is what a replica said about its replication: Lag is
// Seconds_Behind_Master; Running is false when either replication thread
// is stopped (Seconds_Behind_Master is then NULL); Err is a replica that
// could not be asked.
type ReplicaState struct {
	Name    string
	Running bool
	Lag     time.Duration
	Err     string
}

// Signals are the throttle's inputs, read before a chunk.
type Signals struct {
	Replicas []ReplicaState
	// ThreadsRunning is the target's Threads_running (the loader's own
	// connection is one of them).
	ThreadsRunning int
	// Throttle is the --throttle-query's value; HasThrottle says it ran.
	Throttle    float64
	HasThrottle bool
}

// Pause decides whether the next chunk waits, and why: the first of a
// replica that cannot be asked or is not replicating, a replica lagging
// more than MaxLag, the throttle query above 0, Threads_running above
// MaxLoad. "" lets the chunk go.
func Pause(s Signals, l Limits) string {
	for _, r := range s.Replicas {
		switch {
		case r.Err != "":
			return fmt.Sprintf("replica %s cannot be asked for its lag: %s", r.Name, r.Err)
		case !r.Running:
			return fmt.Sprintf("replica %s is not replicating (a replication thread is stopped)", r.Name)
		case r.Lag > l.MaxLag:
			return fmt.Sprintf("replica %s lags %s (max %s)", r.Name, r.Lag, l.MaxLag)
		}
	}
	if s.HasThrottle && s.Throttle > 0 {
		return fmt.Sprintf("throttle query returned %g", s.Throttle)
	}
	if l.MaxLoad > 0 && s.ThreadsRunning > l.MaxLoad {
		return fmt.Sprintf("target Threads_running %d (max %d)", s.ThreadsRunning, l.MaxLoad)
	}
	return ""
}

// Chunk sizes: a load starts at FirstChunk rows; the size stays within
// [MinChunk, MaxChunk]. A chunk that took less than a quarter of
// ChunkTime is followed by the size that would have taken ChunkTime at its
// rate, at most FastGrowth times larger (a load reaches its chunk time in a
// few chunks instead of doubling its way there: a chunk's fixed cost makes
// a small chunk's rate an underestimate, so the jump stays below the
// target); otherwise the size moves half-way to that size, by at most a
// factor of 2.
const (
	FirstChunk = 1000
	MinChunk   = 1
	MaxChunk   = 100000
	FastGrowth = 8
)

// NextChunk is the size of the chunk after one of rows rows whose
// transaction took took (see FirstChunk for the rule).
func NextChunk(rows int, took time.Duration, l Limits) int {
	l = l.WithDefaults()
	if rows <= 0 {
		return FirstChunk
	}
	if took <= 0 {
		return clamp(rows*FastGrowth, MinChunk, MaxChunk)
	}
	ideal := float64(rows) * float64(l.ChunkTime) / float64(took)
	if 4*took <= l.ChunkTime {
		return clamp(int(math.Min(ideal, float64(rows)*FastGrowth)), MinChunk, MaxChunk)
	}
	next := (ideal + float64(rows)) / 2
	next = math.Min(math.Max(next, float64(rows)/2), float64(rows)*2)
	return clamp(int(math.Round(next)), MinChunk, MaxChunk)
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// RateWait is how long a load that has loaded rows rows in elapsed must
// wait before its next chunk to stay at or below maxRowsPerSecond; 0
// without a cap or when it is below the rate.
func RateWait(rows int64, elapsed time.Duration, maxRowsPerSecond int) time.Duration {
	if maxRowsPerSecond <= 0 || rows <= 0 {
		return 0
	}
	due := time.Duration(float64(rows) / float64(maxRowsPerSecond) * float64(time.Second))
	if due <= elapsed {
		return 0
	}
	return due - elapsed
}

// CapChunk bounds a chunk so that one chunk alone does not exceed a
// second's worth of maxRowsPerSecond.
func CapChunk(size, maxRowsPerSecond int) int {
	if maxRowsPerSecond > 0 && size > maxRowsPerSecond {
		return max(maxRowsPerSecond, MinChunk)
	}
	return size
}
