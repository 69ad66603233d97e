package catalog

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// LoadSnapshots reads the manifests of every published snapshot of srcDir,
// oldest first. A current link that does not resolve only marks none current
// (with a warning). Each snapshot is compared with its Prev, or for a snapshot
// without one, with the snapshot listed before it.
func LoadSnapshots(srcDir string, log *slog.Logger) ([]api.SnapshotEntry, error) {
	ids, err := snapshot.ListSnapshots(srcDir)
	if err != nil {
		return nil, err
	}
	cur, err := snapshot.ResolveCurrent(srcDir)
	if err != nil && len(ids) > 0 {
		if _, lerr := os.Lstat(filepath.Join(srcDir, snapshot.CurrentLink)); !errors.Is(lerr, fs.ErrNotExist) {
			log.Warn("current does not resolve", "source_dir", srcDir, "error", err)
		}
	}
	list := make([]api.SnapshotEntry, 0, len(ids))
	for i, id := range ids {
		s, err := snapshot.OpenSnapshot(snapshot.Folder(srcDir).Snapshot(id))
		if err != nil {
			return nil, err
		}
		prev := s.Manifest.Prev
		if prev == "" && i > 0 {
			prev = ids[i-1]
		}
		prevDir := ""
		if prev != "" {
			prevDir = snapshot.Folder(srcDir).Snapshot(prev)
		}
		list = append(list, summarize(s.Manifest, id == cur, func(rel string) bool { return sharedWithPrev(s, prevDir, rel) }))
	}
	return list, nil
}

// summarize builds the entry of the snapshot of manifest m; shared reports
// the files it shares with the previous snapshot (not new).
func summarize(m snapshot.Manifest, current bool, shared func(rel string) bool) api.SnapshotEntry {
	e := api.SnapshotEntry{ID: m.SnapshotID, Current: current, Kind: m.Kind, Prev: m.Prev,
		Position: m.Position, CreatedAt: m.CreatedAt}
	if e.Kind == "" {
		e.Kind = snapshot.SnapshotFull
	}
	isNew := make(map[string]bool, len(m.Files))
	for rel, d := range m.Files {
		isNew[rel] = !shared(rel)
		e.Bytes += d.Size
		if isNew[rel] {
			e.NewBytes += d.Size
		}
	}
	for _, mt := range m.Tables {
		t := api.SnapshotTable{Schema: mt.Schema, Table: mt.Table, Origin: mt.Origin, Kind: mt.Kind,
			Chain: len(mt.Chain) / 2, Rows: mt.Rows}
		if t.Origin == "" {
			t.Origin = snapshot.OriginDump
		}
		for _, rel := range append([]string{mt.File}, mt.Chain...) {
			t.Bytes += m.Files[rel].Size
			if isNew[rel] {
				t.NewBytes += m.Files[rel].Size
			}
		}
		e.Tables = append(e.Tables, t)
	}
	return e
}

// sharedWithPrev reports whether file rel of s is the same inode as rel in
// the folder prevDir.
func sharedWithPrev(s *snapshot.Snapshot, prevDir, rel string) bool {
	if prevDir == "" {
		return false
	}
	st, err := os.Stat(s.Path(rel))
	if err != nil {
		return false
	}
	pst, err := os.Stat(filepath.Join(prevDir, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	return os.SameFile(st, pst)
}

// Where a snapshot is (api.SnapshotEntry.Where).
const (
	WhereLocal  = "local"
	WhereRemote = "remote"
	WhereBoth   = "both"
)

// AddRemote marks where each snapshot of list is and adds the snapshots
// only the remote store holds (store nil: list as it is). A snapshot is
// remote when the store has its manifest (an upload puts it last), and both
// when that manifest is the local one's bytes; a remote manifest with other
// bytes leaves the local snapshot "local", with a warning. A remote-only
// snapshot's new bytes are its files whose path and sha256 its previous
// snapshot's manifest does not list.
func AddRemote(ctx context.Context, list []api.SnapshotEntry, store storage.Store, source, srcDir string, log *slog.Logger) ([]api.SnapshotEntry, error) {
	if store == nil {
		return list, nil
	}
	m, err := remote.New(store, source, srcDir, log)
	if err != nil {
		return nil, err
	}
	ids, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	rcur, err := m.Current(ctx)
	if err != nil {
		return nil, err
	}
	manifests := map[string]snapshot.Manifest{}
	raw := map[string][]byte{}
	for _, id := range ids {
		man, b, err := m.ReadManifest(ctx, id)
		if err != nil {
			return nil, err
		}
		manifests[id], raw[id] = man, b
	}
	local := map[string]bool{}
	for i := range list {
		e := &list[i]
		local[e.ID] = true
		e.Where, e.RemoteCurrent = WhereLocal, e.ID == rcur
		b, ok := raw[e.ID]
		if !ok {
			continue
		}
		lb, err := os.ReadFile(filepath.Join(snapshot.Folder(srcDir).Snapshot(e.ID), snapshot.ManifestName))
		if err != nil {
			return nil, err
		}
		if bytes.Equal(lb, b) {
			e.Where = WhereBoth
		} else {
			log.Warn("the remote manifest differs from the local one", "snapshot", e.ID, "location", store.Location())
		}
	}
	for i, id := range ids {
		if local[id] {
			continue
		}
		man := manifests[id]
		prev, ok := manifests[man.Prev]
		if !ok && man.Prev == "" && i > 0 {
			prev = manifests[ids[i-1]]
		}
		e := summarize(man, false, func(rel string) bool {
			d, ok := prev.Files[rel]
			return ok && d == man.Files[rel]
		})
		e.Where, e.RemoteCurrent = WhereRemote, id == rcur
		list = append(list, e)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	if rcur != "" && raw[rcur] == nil {
		log.Warn("the remote current pointer names a snapshot without a remote manifest", "snapshot", rcur, "location", store.Location())
	}
	return list, nil
}
