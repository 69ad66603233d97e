package archive

import (
	"errors"

	"github.com/dbtrail/dbtrail/internal/change"
)

// prefetchBatch is how many events Prefetch hands over at once.
const prefetchBatch = 4096

// Prefetch runs scan in a goroutine of its own, a few batches ahead of
// its consumer: reading the index (the server's work and the unpacking of
// chunks) overlaps with writing the file. The events must not alias
// memory scan reuses (HourEvents' do not). The returned Scan may be run
// once; when its fn fails, the goroutine is stopped before it returns.
func Prefetch(scan Scan) Scan {
	return func(fn func(change.Event) error) error {
		batches := make(chan []change.Event, 4)
		done := make(chan struct{})
		errc := make(chan error, 1)
		go func() {
			defer close(batches)
			batch := make([]change.Event, 0, prefetchBatch)
			send := func() bool {
				select {
				case batches <- batch:
					batch = make([]change.Event, 0, prefetchBatch)
					return true
				case <-done:
					return false
				}
			}
			err := scan(func(e change.Event) error {
				if batch = append(batch, e); len(batch) == prefetchBatch && !send() {
					return errPrefetchStopped
				}
				return nil
			})
			if err == nil && len(batch) > 0 {
				send()
			}
			errc <- err
		}()
		for b := range batches {
			for _, e := range b {
				if err := fn(e); err != nil {
					close(done)
					for range batches { // let the goroutine end
					}
					return err
				}
			}
		}
		if err := <-errc; err != nil && !errors.Is(err, errPrefetchStopped) {
			return err
		}
		return nil
	}
}

// errPrefetchStopped ends a prefetched scan whose consumer stopped.
var errPrefetchStopped = errors.New("prefetch stopped")
