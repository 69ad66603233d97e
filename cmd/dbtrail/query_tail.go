package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// tailSession adds the live tail to c's session options when it is on:
// --tail (the default) with an index to read (--index-dsn or
// DBTRAIL_INDEX_DSN) and no --snapshot. Without an index it stays off
// unless --tail was given. done closes the index.
func (c *queryConfig) tailSession(cmd *cobra.Command, g *globals, o *views.SessionOptions) (done func(), err error) {
	explicit := cmd.Flags().Changed("tail")
	switch {
	case !c.tail:
		return func() {}, nil
	case c.snapshot != "":
		if explicit {
			return nil, fmt.Errorf("--tail reads the newest snapshot and the changes after it: not with --snapshot")
		}
		return func() {}, nil
	case g.index.value == "" && !explicit:
		return func() {}, nil
	}
	past, closeIndex, err := openPast(cmd, g, c.backupDir, c.source, c.archiveURL)
	if err != nil {
		return nil, fmt.Errorf("--tail: %w", err)
	}
	r := &tail.Reader{Past: past, MaxEvents: c.tailMaxEvents, MemoryLimit: c.memoryLimit, Log: g.log}
	o.Tail = r.ViewsTail(nil)
	return closeIndex, nil
}

// cutNote says which transaction the session's views answer at: the
// tail's cut, or the snapshot's position.
func cutNote(s *views.Session, sourceDir string) string {
	if t := s.Tail(); t != nil {
		return t.Note
	}
	snap, err := moment.LocalCatalog{SourceDir: sourceDir}.Open(context.Background(), s.Snapshot())
	if err != nil {
		return fmt.Sprintf("cut: snapshot %s (its manifest: %v)", s.Snapshot(), err)
	}
	return snapshotCutLine(s.Snapshot(), snap.Manifest.Position)
}

// snapshotCutLine is the cut line of an answer read from snapshot id alone
// (at position p), with no tail.
func snapshotCutLine(id string, p binlogpos.Position) string {
	g := p.GTID
	if g == "" {
		g = "(none)"
	}
	return fmt.Sprintf("cut: snapshot %s at binlog %s, GTID %s, seq %d (the snapshot alone: no tail)", id, p, g, p.Seq)
}

// sourceDir is the folder of c's source.
func (c *queryConfig) sourceDir() string { return filepath.Join(c.backupDir, c.source) }
