package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/dbtrail/dbtrail/calls"
)

// keepAlive heartbeats ctx's activity every HeartbeatEvery with the latest
// detail given to set (nil until then) until stop is called. Progress
// reported through set reaches the heartbeat within HeartbeatEvery; the
// first detail at once, so an attempt killed early still leaves what it
// knew at its start (LoadTable: the rows the target holds).
func keepAlive(ctx context.Context) (set func(detail any), stop func()) {
	var mu sync.Mutex
	var detail any
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(calls.HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				mu.Lock()
				d := detail
				mu.Unlock()
				if d == nil {
					activity.RecordHeartbeat(ctx)
				} else {
					activity.RecordHeartbeat(ctx, d)
				}
			}
		}
	}()
	var once, first sync.Once
	return func(d any) {
			mu.Lock()
			detail = d
			mu.Unlock()
			if activity.IsActivity(ctx) {
				first.Do(func() { activity.RecordHeartbeat(ctx, d) })
			}
		}, func() {
			once.Do(func() { close(done); wg.Wait() })
		}
}
