package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
)

// WriteViews brings <backup dir>/<source>/views.sql up to date with the
// snapshot current names (views.SyncFile): the workflows run it after every
// publish, so a publish that adds or drops a table or changes a table's
// columns gives DuckDB users the new shape with no manual step. It holds the
// publish lock, so it reads current between publishes and the run after the
// last publish writes the last shape. The file is rewritten crash-safely and
// as a whole, only when its text changes; it is idempotent.
func (a *Activities) WriteViews(ctx context.Context, in calls.WriteViewsInput) (calls.WriteViewsResult, error) {
	if a.BackupDir == "" {
		return calls.WriteViewsResult{}, nonRetryable("NoBackupDir", errors.New("no backup folder is configured on this worker"))
	}
	dir := a.sourceDir(in.Source)
	unlock, err := snapshot.LockPublish(ctx, dir)
	if err != nil {
		return calls.WriteViewsResult{}, err
	}
	defer unlock()
	res, err := views.SyncFile(dir)
	if err != nil {
		return calls.WriteViewsResult{}, fmt.Errorf("source %s: %w", in.Source, err)
	}
	if res.Wrote {
		a.log(ctx).Info("views.sql rewritten for a new shape", slog.String("file", res.Path),
			slog.Int("tables", res.Tables), slog.Bool("raw", res.Raw))
	}
	return calls.WriteViewsResult{Path: res.Path, Wrote: res.Wrote, Tables: res.Tables}, nil
}
