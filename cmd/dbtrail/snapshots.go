package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/api"

	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// snapshotEntry is one published snapshot as `dbtrail snapshots` shows it
// (the API's answer type).
type snapshotEntry = api.SnapshotEntry

// snapshotTable is one table of a snapshotEntry.
type snapshotTable = api.SnapshotTable

// newSnapshotsCmd is `dbtrail snapshots`: list the published snapshots of a
// source, oldest first, with how much each one wrote anew.
func newSnapshotsCmd(g *globals) *cobra.Command {
	var backupDir, source, archiveURL string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "snapshots",
		Short: "List the published snapshots of a source, oldest first",
		Long: "List the published snapshots of a source, oldest first, marking the one current names.\n" +
			"Per table: how the snapshot got it (origin), its kind, chain entries, rows, and the bytes\n" +
			"written new by that snapshot (files not hard-linked from the previous snapshot) of the total.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if source == "" || source == "." || source == ".." || strings.ContainsAny(source, `/\`) {
				return fmt.Errorf("--source %q: want a source name (one folder name)", source)
			}
			srcDir := filepath.Join(backupDir, source)
			list, err := loadSnapshots(srcDir, g.log)
			if err != nil {
				return err
			}
			if list, err = addRemote(cmd.Context(), list, archiveURL, source, srcDir, g.log); err != nil {
				return err
			}
			g.log.Debug("snapshots listed", "source_dir", srcDir, "snapshots", len(list))
			out := cmd.OutOrStdout()
			if asJSON {
				if list == nil {
					list = []snapshotEntry{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintf(out, "source %s has no published snapshot in %s\n", source, srcDir)
				return nil
			}
			return writeSnapshots(out, list)
		},
	}
	f := cmd.Flags()
	f.StringVar(&backupDir, "backup-dir", filepath.Join(".dbtrail", "backups"), "backup folder holding <source>/snapshots and <source>/current")
	f.StringVar(&source, "source", "main", "source name")
	f.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	registerArchiveURL(f, &archiveURL, "object storage of the worker's snapshots, to say for each snapshot whether it is local, remote or both")
	return cmd
}

// loadSnapshots reads the manifests of every published snapshot of srcDir,
// oldest first. A current link that does not resolve only marks none current
// (with a warning). Each snapshot is compared with its Prev, or for a snapshot
// without one, with the snapshot listed before it.
func loadSnapshots(srcDir string, log *slog.Logger) ([]snapshotEntry, error) {
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
	list := make([]snapshotEntry, 0, len(ids))
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
func summarize(m snapshot.Manifest, current bool, shared func(rel string) bool) snapshotEntry {
	e := snapshotEntry{ID: m.SnapshotID, Current: current, Kind: m.Kind, Prev: m.Prev,
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
		t := snapshotTable{Schema: mt.Schema, Table: mt.Table, Origin: mt.Origin, Kind: mt.Kind,
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

// writeSnapshots prints list: one header line per snapshot (id, kind,
// position, creation time, tables, size and new size, [current]), then one
// aligned line per table.
func writeSnapshots(w io.Writer, list []snapshotEntry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range list {
		mark := ""
		if e.Current {
			mark = "  [current]"
		}
		if e.RemoteCurrent {
			mark += "  [remote current]"
		}
		kind := e.Kind
		if e.Where != "" {
			kind += "  " + e.Where
		}
		tables := "tables"
		if len(e.Tables) == 1 {
			tables = "table"
		}
		fmt.Fprintf(tw, "%s  %s  %s:%d seq %d  created %s  %d %s  %s, %s new%s\n",
			e.ID, kind, e.Position.File, e.Position.Pos, e.Position.Seq,
			e.CreatedAt.UTC().Format(time.RFC3339), len(e.Tables), tables, sizeText(e.Bytes), sizeText(e.NewBytes), mark)
		if len(e.Tables) == 0 {
			continue
		}
		fmt.Fprintf(tw, "    TABLE\tORIGIN\tKIND\tCHAIN\tROWS\tNEW\tTOTAL\n")
		for _, t := range e.Tables {
			fmt.Fprintf(tw, "    %s.%s\t%s\t%s\t%d\t%d\t%s\t%s\n",
				t.Schema, t.Table, t.Origin, t.Kind, t.Chain, t.Rows, sizeText(t.NewBytes), sizeText(t.Bytes))
		}
	}
	return tw.Flush()
}

// sizeText spells a byte count in binary units with one decimal.
func sizeText(n int64) string { return foldplan.HumanBytes(n) }
