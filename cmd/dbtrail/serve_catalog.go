package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/workers"
)

// catalog answers the API's reads of a source: the snapshots of the backup
// folder (and the remote store), the archived hours and the capture state
// of the index (nil: those answer 501).
type catalog struct {
	backupDir, archiveURL string
	store                 *index.Store
	// archive opens the archive location row histories read the hours the
	// index dropped from (nil: none).
	archive func(ctx context.Context) (storage.Store, error)
	log     *slog.Logger
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

// errEnough stops a row history at the API's limit.
var errEnough = errors.New("enough versions")

// History answers GET /v1/history: the row's versions from the index and,
// with an archive location, the archived hours (as `dbtrail history`).
func (c *catalog) History(ctx context.Context, source, table, key string, limit int) (api.History, error) {
	h := api.History{Source: source, Table: table, Key: key}
	if c.store == nil {
		return h, noIndex
	}
	s, t, _ := strings.Cut(table, ".")
	def, err := tableDefinition(ctx, c.store, source, s, t)
	if errors.Is(err, errUnknownTable) {
		return h, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "table", Message: err.Error()}
	}
	if err != nil {
		return h, explainIndexErr(err)
	}
	pk, err := moment.ParseKey(def, key)
	if err != nil {
		return h, &api.Error{Status: http.StatusBadRequest, Code: api.CodeBadRequest, Field: "key", Message: err.Error()}
	}
	past := moment.Past{Source: source, Index: c.store, Log: c.log}
	if c.archive != nil {
		if past.Archive, err = c.archive(ctx); err != nil {
			return h, err
		}
		h.Archives = true
	}
	err = moment.RowHistory(ctx, past.Events(), source, s, t, pk, func(e change.Event) error {
		if len(h.Versions) == limit {
			h.Truncated = true
			return errEnough
		}
		h.Versions = append(h.Versions, historyJSON(e))
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return h, fmt.Errorf("history of %s key %s: %w", table, pk, err)
	}
	return h, nil
}

// Manifest answers GET /v1/snapshots/{id}/manifest: the manifest.json of
// a snapshot the source's backup folder publishes, as it is on disk.
func (c *catalog) Manifest(_ context.Context, source, id string) ([]byte, error) {
	srcDir := filepath.Join(c.backupDir, source)
	ids, err := snapshot.ListSnapshots(srcDir)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(ids, id) {
		return nil, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "id",
			Message: fmt.Sprintf("source %s has no published snapshot %s in %s", source, id, srcDir)}
	}
	return os.ReadFile(filepath.Join(snapshot.Folder(srcDir).Snapshot(id), snapshot.ManifestName))
}
