package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/catalog"

	"github.com/dbtrail/dbtrail/internal/foldplan"
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
			list, err := catalog.LoadSnapshots(srcDir, g.log)
			if err != nil {
				return err
			}
			store, err := openArchive(cmd.Context(), archiveURL, g.log)
			if err != nil {
				return err
			}
			if list, err = catalog.AddRemote(cmd.Context(), list, store, source, srcDir, g.log); err != nil {
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
