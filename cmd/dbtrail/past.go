package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// openPast opens what a reader of the past reads in this process
// (moment.Past): the index (--index-dsn), the archive location
// (--archive-url or DBTRAIL_ARCHIVE_URL: archived hours and snapshots on
// object storage; none when empty, and a moment that needs an archived
// hour is then refused, naming it) and the source's folder under
// backupDir, whose free space is checked before a snapshot only on the
// store is downloaded into it. done closes the index.
func openPast(cmd *cobra.Command, g *globals, backupDir, source, archiveURL string) (past moment.Past, done func(), err error) {
	return openPastFrom(cmd, g, backupDir, source, archiveURL, false)
}

// openPastRecorded is openPast, but without an archive URL it opens the
// location the index records for the source's archived hours (what
// `dbtrail archives` prints; recordedArchive), with the S3 credentials and
// region of the environment, as the worker that archived them has.
func openPastRecorded(cmd *cobra.Command, g *globals, backupDir, source, archiveURL string) (past moment.Past, done func(), err error) {
	return openPastFrom(cmd, g, backupDir, source, archiveURL, true)
}

func openPastFrom(cmd *cobra.Command, g *globals, backupDir, source, archiveURL string, recorded bool) (past moment.Past, done func(), err error) {
	store, err := openIndex(cmd, g)
	if err != nil {
		return moment.Past{}, nil, err
	}
	var archive storage.Store
	if archiveURL == "" && recorded {
		archive, err = openRecordedArchive(cmd.Context(), store, source, cmd.ErrOrStderr(), g)
	} else {
		archive, err = openArchive(cmd.Context(), archiveURL, g.log)
	}
	if err != nil {
		store.Close()
		return moment.Past{}, nil, err
	}
	past = moment.Past{Source: source, Index: store, Archive: archive, Log: g.log}
	if backupDir != "" {
		past.SourceDir, past.Free = filepath.Join(backupDir, source), disk.Free
	}
	return past, func() { store.Close() }, nil
}

// openRecordedArchive opens the archive location the index records for
// source (recordedArchive), nil when nothing was archived.
func openRecordedArchive(ctx context.Context, store *index.Store, source string, errOut io.Writer, g *globals) (storage.Store, error) {
	u, err := recordedArchive(ctx, store, source, errOut)
	if err != nil || u == "" {
		return nil, err
	}
	s, err := storage.Open(ctx, u, storage.Options{Logger: g.log})
	if err != nil {
		return nil, fmt.Errorf("the archive location the index records for source %s (%s, keys and region from the environment): %w; give --archive-url", source, u, err)
	}
	g.log.Info("archive location from the index's records", "source", source, "location", s.Location())
	return s, nil
}

// recordedArchive is the URL of the archive location the index records
// for source's newest archived hour (storage.RecordedURL), "" when nothing
// was archived. When the hours were archived to several locations, the
// newest is used and the others are named on errOut: an hour only at
// another is then refused naming it, and --archive-url chooses.
func recordedArchive(ctx context.Context, store *index.Store, source string, errOut io.Writer) (string, error) {
	recs, err := store.Archives(ctx, source)
	if err != nil {
		return "", fmt.Errorf("read the archive records of source %s: %w", source, index.Explain(err))
	}
	if len(recs) == 0 {
		return "", nil
	}
	newest := recs[len(recs)-1].Location
	var others []string
	for _, r := range recs {
		if r.Location != newest && !slices.Contains(others, r.Location) {
			others = append(others, r.Location)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(errOut, "the archived hours of source %s are at %d locations; reading %s (the newest hour's), not %v: --archive-url chooses another\n",
			source, len(others)+1, newest, others)
	}
	u, err := storage.RecordedURL(newest)
	if err != nil {
		return "", fmt.Errorf("source %s: %w; give --archive-url", source, err)
	}
	return u, nil
}
