// Package catalog is what the API and the CLI read of a source's backup:
// the published snapshots of its backup folder (and of the archive
// location: where each is), the archived hours, capture's state and
// samples, the index window, a row's history and a snapshot's manifest
// (Catalog, the API's Catalog), and the API's sandboxed query over a views
// session at the live tail, a snapshot or a moment (SandboxQuery). The
// `snapshots`, `archives` and `history` verbs read through the same
// functions.
package catalog

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

// Catalog answers the API's reads of a source: the snapshots of the backup
// folder (and the remote store), the archived hours and the capture state
// of the index (nil: those answer 501).
type Catalog struct {
	BackupDir string
	Store     *index.Store
	// Archive opens the archive location: the snapshots it holds are
	// listed with the local ones (where), and row histories read the
	// hours the index dropped from it (nil: none).
	Archive func(ctx context.Context) (storage.Store, error)
	Log     *slog.Logger
}

// noIndex is the answer of a read that needs the index when serve has none.
var noIndex = &api.Error{Status: http.StatusNotImplemented, Code: api.CodeNotConfigured,
	Message: "this server has no index (--index-dsn): archives and capture status are off"}

func (c *Catalog) Snapshots(ctx context.Context, source string) ([]api.SnapshotEntry, error) {
	srcDir := filepath.Join(c.BackupDir, source)
	list, err := LoadSnapshots(srcDir, c.Log)
	if err != nil {
		return nil, err
	}
	var store storage.Store
	if c.Archive != nil {
		if store, err = c.Archive(ctx); err != nil {
			return nil, err
		}
	}
	if list, err = AddRemote(ctx, list, store, source, srcDir, c.Log); err != nil {
		return nil, err
	}
	if list == nil {
		list = []api.SnapshotEntry{}
	}
	return list, nil
}

func (c *Catalog) Archives(ctx context.Context, source string) ([]api.ArchivedHour, error) {
	if c.Store == nil {
		return nil, noIndex
	}
	list, err := LoadArchives(ctx, c.Store, source)
	if err != nil {
		return nil, index.Explain(err)
	}
	if list == nil {
		list = []api.ArchivedHour{}
	}
	return list, nil
}

func (c *Catalog) Capture(ctx context.Context, source string) (*api.CaptureStatus, error) {
	if c.Store == nil {
		return nil, nil
	}
	var st api.CaptureStatus
	cp, ok, err := c.Store.LoadCheckpoint(ctx, source)
	if err != nil {
		return nil, index.Explain(err)
	}
	if ok {
		st.Checkpoint = &cp
		if !cp.LastCommit.IsZero() {
			lag := time.Since(cp.LastCommit).Seconds()
			st.LagSeconds = &lag
		}
	}
	if st.IndexBytes, err = c.Store.Size(ctx); err != nil {
		return nil, err
	}
	return &st, nil
}

func (c *Catalog) Folders(ctx context.Context) ([]api.FolderSpace, error) {
	if c.Store == nil {
		return nil, nil
	}
	fs, err := c.Store.FolderSpaces(ctx)
	if errors.Is(err, index.ErrNoFolderSpace) {
		return nil, nil // absent, as without an index: the workers are older
	}
	if err != nil {
		return nil, err
	}
	var out []api.FolderSpace
	for _, f := range workers.LatestSpaces(fs) {
		out = append(out, api.FolderSpace{Worker: f.Worker, Folder: f.Folder, Path: f.Path, Free: f.Free, Error: f.Error, MeasuredAt: f.MeasuredAt})
	}
	return out, nil
}

// errEnough stops a row history at the API's limit.
var errEnough = errors.New("enough versions")

// History answers GET /v1/history: the row's versions from the index and,
// with an archive location, the archived hours (as `dbtrail history`).
func (c *Catalog) History(ctx context.Context, source, table, key string, limit int) (api.History, error) {
	h := api.History{Source: source, Table: table, Key: key}
	if c.Store == nil {
		return h, noIndex
	}
	s, t, _ := strings.Cut(table, ".")
	def, err := TableDefinition(ctx, c.Store, source, s, t)
	if errors.Is(err, ErrUnknownTable) {
		return h, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "table", Message: err.Error()}
	}
	if err != nil {
		return h, index.Explain(err)
	}
	pk, err := moment.ParseKey(def, key)
	if err != nil {
		return h, &api.Error{Status: http.StatusBadRequest, Code: api.CodeBadRequest, Field: "key", Message: err.Error()}
	}
	past := moment.Past{Source: source, Index: c.Store, Log: c.Log}
	if c.Archive != nil {
		if past.Archive, err = c.Archive(ctx); err != nil {
			return h, err
		}
		h.Archives = true
	}
	err = moment.RowHistory(ctx, past.Events(), source, s, t, pk, func(e change.Event) error {
		if len(h.Versions) == limit {
			h.Truncated = true
			return errEnough
		}
		h.Versions = append(h.Versions, RowVersion(e))
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return h, fmt.Errorf("history of %s key %s: %w", table, pk, err)
	}
	return h, nil
}

// Manifest answers GET /v1/snapshots/{id}/manifest: the manifest.json of
// a snapshot the source's backup folder publishes, as it is on disk.
func (c *Catalog) Manifest(_ context.Context, source, id string) ([]byte, error) {
	dir, err := c.published(source, id)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, snapshot.ManifestName))
}

// published is the folder of snapshot id that source's backup folder
// publishes, or a 404 *api.Error naming it.
func (c *Catalog) published(source, id string) (string, error) {
	srcDir := filepath.Join(c.BackupDir, source)
	ids, err := snapshot.ListSnapshots(srcDir)
	if err != nil {
		return "", err
	}
	if !slices.Contains(ids, id) {
		return "", &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "id",
			Message: fmt.Sprintf("source %s has no published snapshot %s in %s", source, id, srcDir)}
	}
	return snapshot.Folder(srcDir).Snapshot(id), nil
}
