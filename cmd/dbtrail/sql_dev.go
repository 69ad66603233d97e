package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/sqlport"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// sqlDevJob is dev's SQL port (--sql-addr): the source's backup folder at
// the live tail of dev's index, users from the token file the API uses
// (dev's own, or --token-file), the API's query bounds (its slots,
// --query-memory-limit, --query-max-bytes). It listens at once, so a
// refused address or token file fails dev's start.
func sqlDevJob(ctx context.Context, g *globals, addr string, sc *serveConfig, source, backupDir, archiveURL string, store *index.Store) (devJob, error) {
	tokenFile := sc.tokenFile
	if tokenFile == "" {
		return devJob{}, fmt.Errorf("--sql-addr %s needs a token file for its users: --token-file, or dev's own with --api-addr (tokens from %s are not read by the SQL port)", addr, tokensEnv)
	}
	archive, err := openArchive(ctx, archiveURL, g.log)
	if err != nil {
		return devJob{}, err
	}
	src := filepath.Join(backupDir, source)
	cache, err := sc.tailCache()
	if err != nil {
		return devJob{}, err
	}
	p, err := sqlport.Listen(sqlport.Config{Addr: addr, TokenFile: tokenFile, Log: g.log,
		MaxBytes: sc.queryMaxBytes, Slots: sc.querySlots(),
		Session: views.SessionOptions{Options: views.Options{SourceDir: src}, MemoryLimit: sc.queryMemoryLimit, Threads: 2, Sandbox: true},
		Tail: &tail.Reader{Past: moment.Past{Source: source, Index: store, SourceDir: src, Archive: archive, Free: disk.Free, Log: g.log},
			MaxEvents: sc.queryTailMaxEvents, MemoryLimit: sc.queryMemoryLimit, Log: g.log, Cache: cache}})
	if err != nil {
		return devJob{}, err
	}
	line, err := sqlport.ClientLine(p.Addr(), tokenFile)
	if err != nil {
		p.Close()
		return devJob{}, err
	}
	note := fmt.Sprintf("  SQL port           %s  (MySQL protocol, read-only: SET @@dbtrail_at = 'T' reads moment T)\n", line)
	return devJob{name: "sql", note: note, run: p.Serve}, nil
}
