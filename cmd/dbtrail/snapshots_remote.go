package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Where a snapshot is (snapshotEntry.Where).
const (
	whereLocal  = "local"
	whereRemote = "remote"
	whereBoth   = "both"
)

// addRemote marks where each snapshot of list is and adds the snapshots
// only the remote store holds (archiveURL "" : list as it is). A snapshot is
// remote when the store has its manifest (an upload puts it last), and both
// when that manifest is the local one's bytes; a remote manifest with other
// bytes leaves the local snapshot "local", with a warning. A remote-only
// snapshot's new bytes are its files whose path and sha256 its previous
// snapshot's manifest does not list.
func addRemote(ctx context.Context, list []snapshotEntry, archiveURL, source, srcDir string, log *slog.Logger) ([]snapshotEntry, error) {
	if archiveURL == "" {
		return list, nil
	}
	store, err := openArchive(ctx, archiveURL, log)
	if err != nil {
		return nil, err
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
		e.Where, e.RemoteCurrent = whereLocal, e.ID == rcur
		b, ok := raw[e.ID]
		if !ok {
			continue
		}
		lb, err := os.ReadFile(filepath.Join(snapshot.Folder(srcDir).Snapshot(e.ID), snapshot.ManifestName))
		if err != nil {
			return nil, err
		}
		if bytes.Equal(lb, b) {
			e.Where = whereBoth
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
		e.Where, e.RemoteCurrent = whereRemote, id == rcur
		list = append(list, e)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	if rcur != "" && raw[rcur] == nil {
		log.Warn("the remote current pointer names a snapshot without a remote manifest", "snapshot", rcur, "location", store.Location())
	}
	return list, nil
}
