package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/api"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
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
	def, err := tableDefinition(ctx, store, source, s, t)
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
			return enc.Encode(historyJSON(e))
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

// errUnknownTable is the error of a table the schema history never had.
var errUnknownTable = errors.New("unknown table")

// tableDefinition is the newest definition of schema.table in the source's
// schema history; a table the history never had is an error naming it.
func tableDefinition(ctx context.Context, store moment.History, source, s, t string) (*schema.Table, error) {
	hist, err := store.SchemaHistory(ctx, source)
	if err != nil {
		return nil, err
	}
	var def *schema.Table
	var tables []string
	for _, v := range hist {
		if v.Schema == s && v.Table == t && v.Definition != nil {
			def = v.Definition
		}
		if v.Schema == s && v.Definition != nil && len(tables) < 20 && !contains(tables, v.Table) {
			tables = append(tables, v.Table)
		}
	}
	if def == nil {
		hint := "schema " + s + " has no table in the index"
		if len(tables) > 0 {
			hint = "tables of " + s + ": " + strings.Join(tables, ", ")
		}
		return nil, fmt.Errorf("%w %s.%s in source %s (%s)", errUnknownTable, s, t, source, hint)
	}
	return def, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var opWords = map[change.Op]string{change.OpInsert: "insert", change.OpUpdate: "update", change.OpDelete: "delete"}

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
		e.CommitTime.UTC().Format("2006-01-02 15:04:05.000000 UTC"), opWords[e.Op], gtid, e.BinlogFile, e.EndPos, key)
	if e.Before != nil {
		fmt.Fprintf(w, "  before %s\n", e.Before)
	}
	if e.After != nil {
		fmt.Fprintf(w, "  after  %s\n", e.After)
	}
}

// versionJSON is one version in --json output (the API's RowVersion).
type versionJSON = api.RowVersion

func historyJSON(e change.Event) versionJSON {
	v := versionJSON{Seq: e.Seq, Op: opWords[e.Op], CommitTime: e.CommitTime.UTC(), GTID: e.GTID, BinlogFile: e.BinlogFile,
		EndPos: e.EndPos, Key: json.RawMessage(e.PK), Before: e.Before, After: e.After}
	if e.PKBefore != "" {
		v.KeyBefore = json.RawMessage(e.PKBefore)
	}
	return v
}
