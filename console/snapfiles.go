package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// tableFiles is one table's files in a snapshot's manifest: its table
// file, then its chain entries in the order they apply. Checked marks the
// table whose files were read again (checkFiles).
type tableFiles struct {
	Name    string
	Origin  string
	Files   []fileRow
	Checked bool
}

// fileRow is one file of a table: its role, path and the size and sha256
// the manifest records (Recorded false: the manifest lists no digest for
// it). Compacted marks a chain entry of a compacted range pair.
type fileRow struct {
	Role, Path string
	Size       int64
	SHA256     string
	Recorded   bool
	Compacted  bool
	// Since is the snapshot that first held the file (the same path, size
	// and digest in every snapshot from it to this one) and SinceAt when
	// it was made: the file's age (fileAges).
	Since   string
	SinceAt time.Time
	// Check is the file read again and compared with the manifest (nil:
	// not checked).
	Check *api.FileCheck
}

// manifestFiles reads snapshot id's manifest through the API and lists each
// table's files; a snapshot without a manifest to read (the API's 404 or
// 501) answers none with why.
func (c *Console) manifestFiles(r *http.Request, s *session, source, id string) ([]tableFiles, string, error) {
	var m snapshot.Manifest
	err := c.call(r, s, "GET", "/v1/snapshots/"+url.PathEscape(id)+"/manifest", url.Values{"source": {source}}, nil, &m)
	switch {
	case err == nil:
	case notConfigured(err) || asAPIError(err).Status == http.StatusNotFound:
		return nil, err.Error(), nil
	default:
		return nil, "", err
	}
	out := make([]tableFiles, 0, len(m.Tables))
	for _, t := range m.Tables {
		tf := tableFiles{Name: t.Schema + "." + t.Table, Origin: t.Origin}
		tf.Files = append(tf.Files, fileOf(m, "table file", t.File, false))
		compacted := t.Origin == snapshot.OriginCompacted || t.Origin == snapshot.OriginCompactedPair
		for i, rel := range t.Chain {
			tf.Files = append(tf.Files, fileOf(m, fmt.Sprintf("chain %d", i+1), rel, compacted && i < 2))
		}
		out = append(out, tf)
	}
	return out, "", nil
}

// fileOf is rel's row with the manifest's digest of it.
func fileOf(m snapshot.Manifest, role, rel string, compacted bool) fileRow {
	d, ok := m.Files[rel]
	return fileRow{Role: role, Path: rel, Size: d.Size, SHA256: d.SHA256, Recorded: ok && d.SHA256 != "", Compacted: compacted}
}

// fileKey names a file of a manifest by its path, size and digest.
type fileKey struct {
	path, sha string
	size      int64
}

// fileAges sets, for each file of files (snapshot snaps[i]'s; snaps
// oldest first), the snapshot that first held it: walking back from i
// while each earlier snapshot's manifest holds the same file (path, size
// and sha256), as a refresh links an unchanged file into the next
// snapshot. An earlier snapshot without a manifest to read ends the walk.
func (c *Console) fileAges(r *http.Request, s *session, source string, snaps []api.SnapshotEntry, i int, files []tableFiles) error {
	open := map[fileKey][]*fileRow{}
	for ti := range files {
		for fi := range files[ti].Files {
			f := &files[ti].Files[fi]
			f.Since, f.SinceAt = snaps[i].ID, snaps[i].CreatedAt
			k := fileKey{f.Path, f.SHA256, f.Size}
			open[k] = append(open[k], f)
		}
	}
	for j := i - 1; j >= 0 && len(open) > 0; j-- {
		var m snapshot.Manifest
		err := c.call(r, s, "GET", "/v1/snapshots/"+url.PathEscape(snaps[j].ID)+"/manifest", url.Values{"source": {source}}, nil, &m)
		if notConfigured(err) || err != nil && asAPIError(err).Status == http.StatusNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		for k, rows := range open {
			if d, ok := m.Files[k.path]; !ok || d.SHA256 != k.sha || d.Size != k.size {
				delete(open, k)
				continue
			}
			for _, f := range rows {
				f.Since, f.SinceAt = snaps[j].ID, snaps[j].CreatedAt
			}
		}
	}
	return nil
}

// checkFiles reads again, through the API, the files of the table named
// table ("": none) of snapshot id and sets each file's Check.
func (c *Console) checkFiles(r *http.Request, s *session, source, id, table string, files []tableFiles) error {
	i := slices.IndexFunc(files, func(t tableFiles) bool { return t.Name == table })
	if table == "" || i < 0 {
		return nil
	}
	var fc api.FileChecks
	q := url.Values{"source": {source}, "table": {table}}
	if err := c.call(r, s, "GET", "/v1/snapshots/"+url.PathEscape(id)+"/check", q, nil, &fc); err != nil {
		return err
	}
	files[i].Checked = true
	for j := range files[i].Files {
		for k := range fc.Files {
			if fc.Files[k].Path == files[i].Files[j].Path {
				files[i].Files[j].Check = &fc.Files[k]
			}
		}
	}
	return nil
}
