package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
)

// WriteViewsInput names the source whose views.sql follows its current
// snapshot.
type WriteViewsInput struct {
	Source string
}

// WriteViewsResult is what WriteViews did.
type WriteViewsResult struct {
	Path   string
	Wrote  bool // false: the file already held the views of current's shape
	Tables int
}

// WriteViews brings <backup dir>/<source>/views.sql up to date with the
// snapshot current names (views.SyncFile): the workflows run it after every
// publish, so a publish that adds or drops a table or changes a table's
// columns gives DuckDB users the new shape with no manual step. It holds the
// publish lock, so it reads current between publishes and the run after the
// last publish writes the last shape. The file is rewritten crash-safely and
// as a whole, only when its text changes; it is idempotent.
func (a *Activities) WriteViews(ctx context.Context, in WriteViewsInput) (WriteViewsResult, error) {
	if a.BackupDir == "" {
		return WriteViewsResult{}, nonRetryable("NoBackupDir", errors.New("no backup folder is configured on this worker"))
	}
	dir := a.sourceDir(in.Source)
	unlock, err := snapshot.LockPublish(ctx, dir)
	if err != nil {
		return WriteViewsResult{}, err
	}
	defer unlock()
	res, err := views.SyncFile(dir)
	if err != nil {
		return WriteViewsResult{}, fmt.Errorf("source %s: %w", in.Source, err)
	}
	if res.Wrote {
		a.log(ctx).Info("views.sql rewritten for a new shape", slog.String("file", res.Path),
			slog.Int("tables", res.Tables), slog.Bool("raw", res.Raw))
	}
	return WriteViewsResult{Path: res.Path, Wrote: res.Wrote, Tables: res.Tables}, nil
}
