package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/testsuite"
)

// restoreSchema is the scratch schema of the index server the demo
// restores shop into: beside the index, never on the source (whose binlog
// capture reads).
const restoreSchema = "shop_restored"

// restoreTarget is the demo's restore target: the index server's
// scratch schema restoreSchema, configured for dbtrail dev in the
// targets file that writeTargets writes.
const restoreTarget = "scratch"

// writeTargets writes the demo's restore targets file (0600) and the
// scratch target's password file (0600) into dir and returns the targets
// file's path: one target, the index server, allowed there explicitly
// (index_server) and only into restoreSchema (and dbtrail's bookkeeping
// schema).
func writeTargets(dir string, idx *testsuite.Server) (string, error) {
	pw := filepath.Join(dir, "scratch.password")
	if err := os.WriteFile(pw, []byte(idx.Password+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("scratch target password file: %w", err)
	}
	t := target.Target{Name: restoreTarget, Server: target.Server{DSN: idx.User + "@tcp(" + idx.Addr() + ")/", PasswordFile: pw},
		Schemas: []string{restoreSchema}, IndexServer: true}
	set, err := target.NewSet(t)
	if err != nil {
		return "", err
	}
	b, err := set.Marshal()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "restore-targets.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("restore targets file: %w", err)
	}
	return path, os.Chmod(path, 0o600)
}

// restoreArgs are the arguments of the example `dbtrail restore`: the
// shop tables as they are at the newest captured transaction, into
// restoreSchema of the target restoreTarget (the index server).
func (w *watcher) restoreArgs() []string {
	return []string{"restore", "--temporal-addr", w.cfg.frontendAddr, "--source", sourceName, "--target", restoreTarget, "--at", "latest",
		"--schema", "shop", "--into-schema", restoreSchema, "--checkpoint-schema", restoreSchema}
}

// restoreCommand is the example `dbtrail restore` as the user types it.
func (w *watcher) restoreCommand() string {
	return fmt.Sprintf("%s %s", display(w.bin), strings.Join(w.restoreArgs(), " "))
}

// restoreExample drops restoreSchema on the index server (what an earlier
// demo run restored: a new moment does not load over a table holding
// rows), then runs the example restore and returns what it printed.
func (w *watcher) restoreExample(ctx context.Context) (string, error) {
	if _, err := w.idx.ExecContext(ctx, "DROP DATABASE IF EXISTS "+restoreSchema); err != nil {
		return "", fmt.Errorf("drop the demo's scratch schema %s: %w", restoreSchema, err)
	}
	return output(ctx, w.bin, w.env, w.restoreArgs()...)
}

// writeRestore writes the block's part on the example restore.
func (w *watcher) writeRestore(b *strings.Builder, r backupResult) {
	fmt.Fprintf(b, " Restore the tables at any moment into a live server (chunked, checkpointed, verified;\n here into the scratch schema %s of the index server, the restore target %q of\n the targets file dbtrail dev was given with --restore-targets):\n", restoreSchema, restoreTarget)
	writeExample(b, w.restoreCommand(), r.restore, r.restoreErr)
}
