package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/catalog"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
)

// newHistoryCmd is `dbtrail history schema.table --key K`: every version of
// one row, from the index (and, when they land, the archives).
func newHistoryCmd(g *globals) *cobra.Command {
	var source, key, archiveURL string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history schema.table --key KEY",
		Short: "List every version of one row: op, commit time, GTID, before and after, following key changes",
		Long: `List every change of the row whose key is KEY, oldest first: its seq, op,
commit time (UTC), GTID, binlog position, key, and the before and after images
(the row's canonical JSON, docs/types.md). An update that moved the row to
another key is followed under the new key; one that moved it here from another
key brings that key's changes before it.

KEY is the key's value as SELECT prints it (42, abc), or for a key of several
columns a JSON array in key order ('[7,"abc"]'); a binary value may be written
0x and hex digits. A table without a primary or unique key is keyed by all its
columns.

--json prints one JSON object per version (JSON lines), images as objects.
It reads the index (--index-dsn) and, for the hours the index no longer
holds, their archive files at --archive-url (DBTRAIL_ARCHIVE_URL); without
it, at the location the index records for them (dbtrail archives prints it),
with the S3 keys and region of the environment, as the worker's.`,
		Example: "  dbtrail history shop.orders --key 42\n" +
			"  dbtrail history shop.order_lines --key '[42,\"A-7\"]' --json | jq .after",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return fmt.Errorf("--key is required")
			}
			past, done, err := openPastRecorded(cmd, g, "", source, archiveURL)
			if err != nil {
				return err
			}
			defer done()
			return runHistory(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), past, args[0], key, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "main", "source name")
	f.StringVar(&key, "key", "", "the row's key (a value, or a JSON array for a key of several columns)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object per version")
	registerArchiveURL(f, &archiveURL, "the archive location, where the versions in hours older than the index window are read (default: the location the index records)")
	return cmd
}

// runHistory prints the history of one row of table (schema.table).
func runHistory(ctx context.Context, out, errOut io.Writer, past moment.Past, table, key string, asJSON bool) error {
	store, source := past.Index, past.Source
	s, t, ok := strings.Cut(table, ".")
	if !ok || s == "" || t == "" {
		return fmt.Errorf("table %q: name it as schema.table", table)
	}
	def, err := catalog.TableDefinition(ctx, store, source, s, t)
	if err != nil {
		return err
	}
	pk, err := moment.ParseKey(def, key)
	if err != nil {
		return err
	}
	n := 0
	enc := json.NewEncoder(out)
	err = moment.RowHistory(ctx, past.Events(), source, s, t, pk, func(e change.Event) error {
		n++
		if asJSON {
			return enc.Encode(catalog.RowVersion(e))
		}
		printVersion(out, e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("history of %s key %s: %w", table, pk, err)
	}
	if n == 0 {
		where := "in the index or the archived hours"
		if past.Archive == nil {
			where = "in the index (no hour of it archived: no archive location recorded or given)"
		}
		fmt.Fprintf(errOut, "no change of %s with key %s is %s of source %s\n", table, pk, where, source)
	} else if !asJSON {
		fmt.Fprintf(errOut, "%d versions of %s key %s\n", n, table, pk)
	}
	return nil
}

// printVersion writes one version as text.
func printVersion(w io.Writer, e change.Event) {
	gtid := e.GTID
	if gtid == "" {
		gtid = "-"
	}
	key := "key " + e.PK
	if e.PKBefore != "" && e.PKBefore != e.PK {
		key += " (was " + e.PKBefore + ")"
	}
	fmt.Fprintf(w, "seq %d  %s  %-6s  GTID %s  binlog %s:%d  %s\n", e.Seq,
		e.CommitTime.UTC().Format("2006-01-02 15:04:05.000000 UTC"), catalog.OpWords[e.Op], gtid, e.BinlogFile, e.EndPos, key)
	if e.Before != nil {
		fmt.Fprintf(w, "  before %s\n", e.Before)
	}
	if e.After != nil {
		fmt.Fprintf(w, "  after  %s\n", e.After)
	}
}
