package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// CheckFiles answers GET /v1/snapshots/{id}/check: each file of table
// (schema.table: its table file, then its chain) in the published
// snapshot id of source, read again and compared with the manifest's size
// and sha256. A file that differs, is missing or cannot be read is said in
// its status, not an error; a snapshot or table the source does not have
// is a 404.
func (c *Catalog) CheckFiles(ctx context.Context, source, id, table string) (api.FileChecks, error) {
	out := api.FileChecks{Snapshot: id, Table: table, Files: []api.FileCheck{}}
	dir, err := c.published(source, id)
	if err != nil {
		return out, err
	}
	snap, err := snapshot.OpenSnapshot(dir)
	if err != nil {
		return out, err
	}
	i := slices.IndexFunc(snap.Manifest.Tables, func(t snapshot.ManifestTable) bool { return t.Schema+"."+t.Table == table })
	if i < 0 {
		return out, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "table",
			Message: fmt.Sprintf("snapshot %s has no table %s", id, table)}
	}
	t := snap.Manifest.Tables[i]
	for _, rel := range append([]string{t.File}, t.Chain...) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out.Files = append(out.Files, checkFile(snap, rel))
	}
	return out, nil
}

// checkFile is the check of file rel of snap.
func checkFile(snap *snapshot.Snapshot, rel string) api.FileCheck {
	err := snap.Verify(rel)
	var de *snapshot.DigestError
	switch {
	case err == nil:
		return api.FileCheck{Path: rel, Status: "ok"}
	case errors.As(err, &de):
		return api.FileCheck{Path: rel, Status: "differs", Detail: de.Error()}
	case errors.Is(err, fs.ErrNotExist):
		return api.FileCheck{Path: rel, Status: "missing", Detail: err.Error()}
	default:
		return api.FileCheck{Path: rel, Status: "error", Detail: err.Error()}
	}
}
