package capture

import (
	"context"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
)

// writer commits batches to the index. An index transaction stays open from
// the first batch after a checkpoint to the next batch that carries one, so
// events and the checkpoint that covers them commit together or not at all.
type writer struct {
	store   *index.Store
	source  string
	lease   *index.Lease
	metrics *Metrics
	// committed is called after each commit with the checkpoint written.
	committed func(change.Checkpoint)
}

// run consumes batches until in is closed or an error occurs. On error the
// open index transaction is rolled back: the index keeps the previous
// checkpoint and none of the events after it.
func (w *writer) run(ctx context.Context, in <-chan *batch) (err error) {
	var tx *index.Tx
	var uncommitted int
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	for b := range in {
		if tx == nil {
			if tx, err = w.store.Begin(ctx, w.source, w.lease); err != nil {
				return fmt.Errorf("begin index transaction: %w", err)
			}
		}
		if b.events != nil {
			if err := tx.InsertPacked(ctx, b.events); err != nil {
				return err
			}
			uncommitted += b.events.Events()
			b.events.Release()
		}
		for _, v := range b.schemas {
			if err := tx.PutSchemaVersion(ctx, v); err != nil {
				return fmt.Errorf("schema history of %s.%s version %d: %w", v.Schema, v.Table, v.Version, err)
			}
		}
		if b.fill != nil {
			if err := tx.SetEndPos(ctx, b.fill.fromSeq, b.fill.toSeq, b.fill.file, b.fill.endPos); err != nil {
				return err
			}
		}
		if b.checkpoint == nil {
			continue
		}
		b.checkpoint.UpdatedAt = time.Now().UTC()
		if err := tx.SaveCheckpoint(ctx, *b.checkpoint); err != nil {
			return fmt.Errorf("save checkpoint %s:%d: %w", b.checkpoint.BinlogFile, b.checkpoint.BinlogPos, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit index transaction up to seq %d (%s:%d): %w",
				b.checkpoint.LastSeq, b.checkpoint.BinlogFile, b.checkpoint.BinlogPos, err)
		}
		tx = nil
		w.metrics.EventsIndexed.WithLabelValues(w.source).Add(float64(uncommitted))
		uncommitted = 0
		w.metrics.LastCheckpoint.WithLabelValues(w.source).Set(float64(b.checkpoint.UpdatedAt.UnixNano()) / 1e9)
		if !b.checkpoint.LastCommit.IsZero() {
			w.metrics.LastCommit.WithLabelValues(w.source).Set(float64(b.checkpoint.LastCommit.UnixNano()) / 1e9)
		}
		if w.committed != nil {
			w.committed(*b.checkpoint)
		}
	}
	return nil
}
