package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/moment"
)

// openPast opens what a reader of the past reads in this process
// (moment.Past): the index (--index-dsn), the archive location
// (--archive-url or DBTRAIL_ARCHIVE_URL: archived hours and snapshots on
// object storage; none when empty, and a moment that needs an archived
// hour is then refused, naming it) and the source's folder under
// backupDir, whose free space is checked before a snapshot only on the
// store is downloaded into it. done closes the index.
func openPast(cmd *cobra.Command, g *globals, backupDir, source, archiveURL string) (past moment.Past, done func(), err error) {
	archive, err := openArchive(cmd.Context(), archiveURL, g.log)
	if err != nil {
		return moment.Past{}, nil, err
	}
	store, err := openIndex(cmd, g)
	if err != nil {
		return moment.Past{}, nil, err
	}
	past = moment.Past{Source: source, Index: store, Archive: archive, Log: g.log}
	if backupDir != "" {
		past.SourceDir, past.Free = filepath.Join(backupDir, source), disk.Free
	}
	return past, func() { store.Close() }, nil
}
