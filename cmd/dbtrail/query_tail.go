package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	cache, err := newTailCache(c.tempDir, c.tailCacheSize)
	if err != nil {
		closeIndex()
		return nil, err
	}
	r := &tail.Reader{Past: past, MaxEvents: c.tailMaxEvents, MemoryLimit: c.memoryLimit, Log: g.log, Cache: cache}
	o.Tail = r.ViewsTail(nil)
	return func() { closeTailCache(cache); closeIndex() }, nil
}

// registerTailCache registers the flag name of a tail cache's size.
func registerTailCache(f *pflag.FlagSet, size *int64, name string) {
	f.Int64Var(size, name, tail.DefaultCacheBytes, "bytes of staged tail windows kept between statements, so that the next one stages only the changes after the last one's cut (0: none)")
}

// newTailCache is a process's tail cache of size bytes in a new folder
// under parent (the system's temp folder when empty), or none for 0.
func newTailCache(parent string, size int64) (*tail.Cache, error) {
	if size == 0 {
		return nil, nil
	}
	return tail.NewCache(parent, size)
}

// closeTailCache removes cache's files (nil: none).
func closeTailCache(cache *tail.Cache) {
	if cache != nil {
		cache.Close()
	}
}

// sourceDir is the folder of c's source.
func (c *queryConfig) sourceDir() string { return filepath.Join(c.backupDir, c.source) }
