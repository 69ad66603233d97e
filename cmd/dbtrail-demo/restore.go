package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// restoreSchema is the scratch schema of the index server the demo
// restores shop into: beside the index, never on the source (whose binlog
// capture reads).
const restoreSchema = "shop_restored"

// restoreArgs are the arguments of the example `dbtrail restore`: the
// shop tables as they are at the newest captured transaction, into
// restoreSchema on the index server. The target's password comes from the
// environment (DBTRAIL_TARGET_DSN), never the command line.
func (w *watcher) restoreArgs() []string {
	return []string{"restore", "--temporal-addr", w.cfg.frontendAddr, "--source", sourceName, "--at", "latest",
		"--schema", "shop", "--into-schema", restoreSchema}
}

// restoreCommand is the example `dbtrail restore` as the user types it.
func (w *watcher) restoreCommand() string {
	return fmt.Sprintf("DBTRAIL_TARGET_DSN=<a DSN of the scratch server> %s %s", display(w.bin), strings.Join(w.restoreArgs(), " "))
}

// restoreExample drops restoreSchema on the index server (what an earlier
// demo run restored: a new moment does not load over a table holding
// rows), then runs the example restore and returns what it printed.
func (w *watcher) restoreExample(ctx context.Context) (string, error) {
	if _, err := w.idx.ExecContext(ctx, "DROP DATABASE IF EXISTS "+restoreSchema); err != nil {
		return "", fmt.Errorf("drop the demo's scratch schema %s: %w", restoreSchema, err)
	}
	target, err := serverDSN(w.indexDSN)
	if err != nil {
		return "", err
	}
	env := append(append([]string(nil), w.env...), "DBTRAIL_TARGET_DSN="+target)
	return output(ctx, w.bin, env, w.restoreArgs()...)
}

// serverDSN is dsn without its default database: a DSN of the server.
func serverDSN(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("index DSN: %w", err)
	}
	cfg.DBName = ""
	return cfg.FormatDSN(), nil
}

// writeRestore writes the block's part on the example restore.
func (w *watcher) writeRestore(b *strings.Builder, r backupResult) {
	fmt.Fprintf(b, " Restore the tables at any moment into a live server (chunked, checkpointed, verified;\n here into the scratch schema %s of the index server):\n", restoreSchema)
	writeExample(b, w.restoreCommand(), r.restore, r.restoreErr)
}
