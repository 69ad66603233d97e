package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/shell"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// queryConfig is what `dbtrail query` reads and how it prints.
type queryConfig struct {
	backupDir, source, snapshot string
	format                      string
	raw                         bool
	memoryLimit                 string
	threads                     int
	tempDir                     string
	tail                        bool
	tailMaxEvents               int64
	// tailCacheSize bounds the tail cache's files (0: no cache).
	tailCacheSize int64
	// noSandbox lets DuckDB read any file the user can (--no-sandbox).
	noSandbox bool
	// archiveURL is where the tail reads the hours the index dropped.
	archiveURL string
}

// newQueryCmd is `dbtrail query`: SQL over a snapshot with the DuckDB built
// into dbtrail, the views of every table loaded.
func newQueryCmd(g *globals) *cobra.Command {
	var c queryConfig
	cmd := &cobra.Command{
		Use:   "query [SQL]",
		Short: "Query a snapshot with DuckDB: every table is a view (schema.table)",
		Long: "Open DuckDB (in memory, bounded by --memory-limit and --threads, spilling to --temp-dir)\n" +
			"with one view per table of the current snapshot (or --snapshot ID), generated from that\n" +
			"snapshot's files. With SQL, run it and print the result; without, read statements ending\n" +
			"with ';' from the terminal (or standard input): an interactive shell with .tables,\n" +
			".schema [table], .format table|csv|json, .help and .quit.\n\n" +
			"Only read statements run: SELECT (with WITH, VALUES, FROM, DESCRIBE, SHOW, SUMMARIZE) and\n" +
			"EXPLAIN of one, calling no function that writes or changes settings; the settings are locked.\n" +
			"DuckDB is sandboxed as in the API: it reads the source's backup folder and its own temp folder\n" +
			"only, with no network and no extension (--no-sandbox lifts that for a person on this machine).\n" +
			"The views are typed: DECIMAL, DATE, DATETIME and TIMESTAMP (UTC), TIME as DuckDB DECIMAL,\n" +
			"DATE, TIMESTAMP, INTERVAL; a value the type cannot\n" +
			"hold (a zero date, a DECIMAL beyond 38 digits) reads as NULL. --raw shows the stored text.\n" +
			"The session's time zone is UTC.\n\n" +
			"With the index (--index-dsn or DBTRAIL_INDEX_DSN) the views are the newest snapshot plus the\n" +
			"changes captured after it, cut at the newest captured transaction for every table (the live\n" +
			"tail; a schema change after the snapshot falls back to the snapshot, saying why); --tail=false\n" +
			"reads the snapshot alone. The transaction the answer is cut at is printed on standard error.",
		Example: "  dbtrail query --backup-dir /backups \"SELECT status, count(*), sum(total) FROM shop.orders GROUP BY ALL\"\n" +
			"  dbtrail query --format csv \"SELECT * FROM shop.customers WHERE created_at > now() - INTERVAL 1 DAY\" > new.csv\n" +
			"  dbtrail query --snapshot 20261129T061500Z \"SELECT count(*) FROM shop.orders\"\n" +
			"  dbtrail query            # interactive",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := c.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			o := c.sessionOptions()
			closeIndex, err := c.tailSession(cmd, g, &o)
			if err != nil {
				return err
			}
			defer closeIndex()
			s, err := views.OpenSession(ctx, o)
			if err != nil {
				return err
			}
			defer s.Close()
			g.log.Debug("query session open", "snapshot", s.Snapshot(), "tables", len(s.Tables()), "raw", c.raw, "tail", o.Tail != nil)
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if len(args) == 1 {
				fmt.Fprintln(errOut, shell.CutNote(s, c.sourceDir()))
				return shell.RunScript(ctx, s, args[0], c.format, out)
			}
			sh := &shell.Shell{Session: s, Format: c.format, Out: out, ErrOut: errOut, SourceDir: c.sourceDir()}
			return sh.Run(ctx, cmd.InOrStdin())
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.backupDir, "backup-dir", filepath.Join(".dbtrail", "backups"), "backup folder holding <source>/snapshots and <source>/current")
	f.StringVar(&c.source, "source", "main", "source name")
	f.StringVar(&c.snapshot, "snapshot", "", "snapshot id to query (default: the one current names)")
	f.StringVar(&c.format, "format", shell.FormatTable, "output format: table (aligned), csv or json")
	f.BoolVar(&c.raw, "raw", false, "show DECIMAL, DATE, DATETIME, TIMESTAMP and TIME as their stored text")
	f.StringVar(&c.memoryLimit, "memory-limit", "1GB", "DuckDB memory limit; beyond it DuckDB spills to --temp-dir")
	f.IntVar(&c.threads, "threads", 2, "DuckDB threads")
	f.StringVar(&c.tempDir, "temp-dir", "", "folder DuckDB spills to (default: a new folder under the system's temp folder, removed at the end)")
	f.BoolVar(&c.tail, "tail", true, "answer from the newest snapshot plus the changes captured after it, cut at the newest captured transaction (needs --index-dsn; "+
		"without one the snapshot alone is read unless --tail is given); --tail=false reads the snapshot alone")
	f.Int64Var(&c.tailMaxEvents, "tail-max-events", tail.DefaultMaxEvents, "largest tail folded: with more changes after the snapshot the answer is the snapshot's, with the reason")
	registerTailCache(f, &c.tailCacheSize, "tail-cache-size")
	f.BoolVar(&c.noSandbox, "no-sandbox", false, "let DuckDB read any file this user can, and the network (default: the source's backup folder and the temp folder only, as in the API)")
	registerArchiveURL(f, &c.archiveURL, "archive location the tail reads the hours the index dropped from (without it such a tail is left out, with the reason)")
	return cmd
}

// check validates the flags.
func (c *queryConfig) check() error {
	if c.backupDir == "" {
		return fmt.Errorf("--backup-dir (or %s) is required", envName("backup-dir"))
	}
	if c.source == "" || c.source == "." || c.source == ".." || strings.ContainsAny(c.source, `/\`) {
		return fmt.Errorf("--source %q: want a source name (one folder name)", c.source)
	}
	if c.threads < 1 {
		return fmt.Errorf("--threads %d: want at least 1", c.threads)
	}
	if c.tailMaxEvents < 1 {
		return fmt.Errorf("--tail-max-events %d: want at least 1", c.tailMaxEvents)
	}
	if c.tailCacheSize < 0 {
		return fmt.Errorf("--tail-cache-size %d: want 0 (no cache) or more", c.tailCacheSize)
	}
	if c.memoryLimit == "" {
		return fmt.Errorf("--memory-limit is required")
	}
	return shell.CheckFormat(c.format)
}

// sessionOptions are the views session of c.
func (c *queryConfig) sessionOptions() views.SessionOptions {
	return views.SessionOptions{
		Options:     views.Options{SourceDir: filepath.Join(c.backupDir, c.source), Snapshot: c.snapshot, Raw: c.raw},
		MemoryLimit: c.memoryLimit, Threads: c.threads, TempDir: c.tempDir, Sandbox: !c.noSandbox,
	}
}
