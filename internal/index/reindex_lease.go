package index

import (
	"context"
	"fmt"
	"time"
)

// reindex and capture of a source exclude each other through two
// things, the source's capture lease and the restore's row in restores:
//
//   - every restore step (BeginReindex, ReindexHour, FinishReindex) runs
//     holding the lease (TryLease) and commits only while it holds it;
//   - capture, once it holds the lease, refuses while the source has an
//     unfinished restore (CheckNoReindex).
//
// BeginReindex checks that the index holds nothing of the source and
// records the restore in one transaction under the lease, so a capture
// either ran before (and the restore is refused) or takes the lease after
// the record exists (and refuses). Between two steps, and after a worker
// died (its lease connection ends with it), the lease is free but the row
// still says unfinished: capture keeps refusing until FinishReindex marks
// the restore finished, in the transaction that writes the checkpoint
// capture resumes from.

// UnfinishedReindexError is CheckNoReindex's refusal: a reindex of
// the source began and has not finished, so the index holds only part of
// the source's past and no checkpoint yet.
type UnfinishedReindexError struct {
	Restore ReindexState
}

func (e *UnfinishedReindexError) Error() string {
	r := e.Restore
	return fmt.Sprintf("reindex of source %s from %s, begun at %s, is unfinished: capture would write into a half-restored index; "+
		"wait for it to finish (run dbtrail reindex again with the same location to go on with it), then start capture",
		r.Source, r.Location, r.StartedAt.UTC().Format(time.RFC3339))
}

// CheckNoReindex returns an *UnfinishedReindexError when source has an
// unfinished reindex, nil when it has none or a finished one. Capture
// asks it holding the source's lease, before it writes anything.
func (s *Store) CheckNoReindex(ctx context.Context, source string) error {
	st, found, err := s.ReindexStatus(ctx, source)
	if err != nil {
		return err
	}
	if found && st.FinishedAt.IsZero() {
		return &UnfinishedReindexError{Restore: st}
	}
	return nil
}
