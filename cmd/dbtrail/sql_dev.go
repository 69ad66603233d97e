package main

import (
	"context"
	"fmt"
	"net"
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
// (dev's own, or --token-file). It listens at once, so a refused address
// or token file fails dev's start.
func sqlDevJob(ctx context.Context, g *globals, addr, tokenFile, source, backupDir, archiveURL string, store *index.Store) (devJob, error) {
	if tokenFile == "" {
		return devJob{}, fmt.Errorf("--sql-addr %s needs a token file for its users: --token-file, or dev's own with --api-addr (tokens from %s are not read by the SQL port)", addr, tokensEnv)
	}
	archive, err := openArchive(ctx, archiveURL, g.log)
	if err != nil {
		return devJob{}, err
	}
	src := filepath.Join(backupDir, source)
	p, err := sqlport.Listen(sqlport.Config{Addr: addr, TokenFile: tokenFile, Log: g.log,
		Session: views.SessionOptions{Options: views.Options{SourceDir: src}, MemoryLimit: "512MB", Threads: 2, Sandbox: true},
		Tail: &tail.Reader{Past: moment.Past{Source: source, Index: store, SourceDir: src, Archive: archive, Free: disk.Free, Log: g.log},
			MemoryLimit: "512MB", Log: g.log}})
	if err != nil {
		return devJob{}, err
	}
	host, port, _ := net.SplitHostPort(p.Addr())
	note := fmt.Sprintf("  SQL port           mariadb -h %s -P %s -u NAME -pSECRET  (MySQL protocol, read-only; a token's name and secret in %s)\n",
		host, port, tokenFile)
	return devJob{name: "sql", note: note, run: p.Serve}, nil
}
