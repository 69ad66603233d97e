package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/workers"
)

// catalog answers the API's reads of a source: the snapshots of the backup
// folder (and the remote store), the archived hours and the capture state
// of the index (nil: those answer 501).
type catalog struct {
	backupDir, archiveURL string
	store                 *index.Store
	log                   *slog.Logger
}

// noIndex is the answer of a read that needs the index when serve has none.
var noIndex = &api.Error{Status: http.StatusNotImplemented, Code: api.CodeNotConfigured,
	Message: "this server has no index (--index-dsn): archives and capture status are off"}

func (c *catalog) Snapshots(ctx context.Context, source string) (any, error) {
	srcDir := filepath.Join(c.backupDir, source)
	list, err := loadSnapshots(srcDir, c.log)
	if err != nil {
		return nil, err
	}
	if list, err = addRemote(ctx, list, c.archiveURL, source, srcDir, c.log); err != nil {
		return nil, err
	}
	if list == nil {
		list = []snapshotEntry{}
	}
	return list, nil
}

func (c *catalog) Archives(ctx context.Context, source string) (any, error) {
	if c.store == nil {
		return nil, noIndex
	}
	list, err := loadArchives(ctx, c.store, source)
	if err != nil {
		return nil, explainIndexErr(err)
	}
	if list == nil {
		list = []archiveEntry{}
	}
	return list, nil
}

// captureStatus is the capture part of GET /v1/status.
type captureStatus = api.CaptureStatus

func (c *catalog) Capture(ctx context.Context, source string) (any, error) {
	if c.store == nil {
		return nil, nil
	}
	var st captureStatus
	cp, ok, err := c.store.LoadCheckpoint(ctx, source)
	if err != nil {
		return nil, explainIndexErr(err)
	}
	if ok {
		st.Checkpoint = &cp
		if !cp.LastCommit.IsZero() {
			lag := time.Since(cp.LastCommit).Seconds()
			st.LagSeconds = &lag
		}
	}
	if st.IndexBytes, err = c.store.Size(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

func (c *catalog) Folders(ctx context.Context) (any, error) {
	if c.store == nil {
		return nil, nil
	}
	fs, err := c.store.FolderSpaces(ctx)
	if errors.Is(err, index.ErrNoFolderSpace) {
		return nil, nil // absent, as without an index: the workers are older
	}
	if err != nil {
		return nil, err
	}
	if fs = workers.LatestSpaces(fs); fs == nil {
		fs = []index.FolderSpace{}
	}
	return fs, nil
}
