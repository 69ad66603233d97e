package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/catalog"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// archiveEntry is one archived hour as `dbtrail archives` shows it.
type archiveEntry = api.ArchivedHour

func newArchivesCmd(g *globals) *cobra.Command {
	var source, url string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "archives",
		Short: "List the archived hours of a source: events, bytes, where, confirmed or not",
		Long: `archives lists, oldest first, the hours of a source that the archive workflow
wrote to object storage, from the index's records: the events and bytes of each
hour's file, how many of the hour's events the index still holds, where the file
is, and whether it was confirmed (read back: size, sha256, footer count). A
confirmed hour's events leave the index; an unconfirmed one's never do.
With --archive-url the store is checked too: every recorded file is looked up
(size and sha256), and files the index does not know are listed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openIndex(cmd, g)
			if err != nil {
				return err
			}
			defer store.Close()
			ctx := cmd.Context()
			list, err := catalog.LoadArchives(ctx, store, source)
			if err != nil {
				return index.Explain(err)
			}
			if url != "" {
				st, err := storage.Open(ctx, url, storage.Options{Logger: g.log})
				if err != nil {
					return err
				}
				if list, err = checkStored(ctx, st, source, list); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if list == nil {
					list = []archiveEntry{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintf(out, "source %s: nothing archived; the index keeps every hour (the archive needs an archive location, --archive-url)\n", source)
				return nil
			}
			return writeArchives(out, source, list)
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "main", "source name")
	f.StringVar(&url, "archive-url", "", "also check the archive location (a folder or s3://bucket/prefix?..., see docs/storage.md)")
	f.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	return cmd
}

// checkStored looks every recorded file up in st and appends the archive
// files st holds that no record names.
func checkStored(ctx context.Context, st storage.Store, source string, list []archiveEntry) ([]archiveEntry, error) {
	known := map[string]bool{}
	for i := range list {
		e := &list[i]
		known[e.Object] = true
		info, err := st.Stat(ctx, e.Object)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			e.Stored = "missing"
		case err != nil:
			return nil, fmt.Errorf("look up %s in %s: %w", e.Object, st.Location(), err)
		case info.Size != e.Bytes || (info.SHA256 != "" && info.SHA256 != e.SHA256):
			e.Stored = "differs"
		case info.SHA256 == "":
			e.Stored = "size ok" // the store keeps no sha256 to compare
		default:
			e.Stored = "ok"
		}
	}
	err := st.List(ctx, archive.ArchivesPrefix(source), func(info storage.Info) error {
		h, ok := archive.ParseObjectName(source, info.Name)
		if ok && !known[info.Name] {
			list = append(list, archiveEntry{Hour: h, Bytes: info.Size, Location: st.Location(), Object: info.Name, Stored: "unrecorded"})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list archives in %s: %w", st.Location(), err)
	}
	return list, nil
}

// writeArchives prints a summary line and one aligned line per hour.
func writeArchives(w io.Writer, source string, list []archiveEntry) error {
	var events, bytes int64
	unconfirmed := 0
	for _, e := range list {
		events += e.Events
		bytes += e.Bytes
		if e.Confirmed.IsZero() {
			unconfirmed++
		}
	}
	fmt.Fprintf(w, "source %s: %d hours archived, %d events, %s; %d not confirmed\n", source, len(list), events, sizeText(bytes), unconfirmed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "HOUR (UTC)\tEVENTS\tBYTES\tSEQS\tIN INDEX\tCONFIRMED\tSTORED\tWHERE\n")
	for _, e := range list {
		confirmed := "no"
		if !e.Confirmed.IsZero() {
			confirmed = e.Confirmed.UTC().Format(time.RFC3339)
		}
		stored := e.Stored
		if stored == "" {
			stored = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d..%d\t%d\t%s\t%s\t%s: %s\n", e.Hour.UTC().Format("2006-01-02 15:00"), e.Events, sizeText(e.Bytes),
			e.FirstSeq, e.LastSeq, e.InIndex, confirmed, stored, e.Location, e.Object)
	}
	return tw.Flush()
}
