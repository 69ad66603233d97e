package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/target"
)

// workerConfig is what a worker's activities need: the source, the index
// (the global --index-dsn) and the folders.
type workerConfig struct {
	source    string
	sourceDSN dsnFlag
	backupDir string
	workDir   string
	mydumper  string
	// foldMemory is DuckDB's memory limit per refreshed table.
	foldMemory string
	dumpStall  time.Duration
	dumpHang   time.Duration
	// archiveURL is the remote store of snapshots ("" : local only).
	archiveURL string
	// restorePartRows is activities.Activities.RestorePartRows.
	restorePartRows int64
	// targetsFile is the restore targets file (--restore-targets).
	targetsFile string
	// adHocTargets allows restores into a DSN given by the CLI on this
	// machine (--allow-ad-hoc-targets).
	adHocTargets bool
	// retention is the worker's retention policy (activities.Activities.Retention).
	retention retentionFlags
}

func newWorkerConfig() *workerConfig {
	return &workerConfig{sourceDSN: dsnFlag{name: "source-dsn"}}
}

func (w *workerConfig) register(f *pflag.FlagSet) {
	f.StringVar(&w.source, "source", "main", "name of the source in the index and the backup folder")
	w.sourceDSN.register(f, "source server")
	f.StringVar(&w.backupDir, "backup-dir", filepath.Join(".dbtrail", "backups"), "backup folder: <dir>/<source>/snapshots, current, views.sql")
	f.StringVar(&w.workDir, "work-dir", "", "scratch folder for dumps (default <backup-dir>/.work)")
	f.StringVar(&w.mydumper, "mydumper", "mydumper", "mydumper binary")
	f.DurationVar(&w.dumpStall, "dump-stall", activities.DefaultDumpStall, "kill and retry a mydumper that makes no progress (no output, no dump bytes) this long")
	f.DurationVar(&w.dumpHang, "dump-hang", activities.DefaultDumpHang, "run mydumper again at once when it makes no progress this long while the source runs no query (mydumper waiting on itself)")
	f.StringVar(&w.foldMemory, "fold-memory", "256MB", "DuckDB memory limit of a refresh or compaction of one table (it spills to the work folder beyond it)")
	f.Int64Var(&w.restorePartRows, "restore-part-rows", activities.DefaultRestorePartRows, "a restore loads a table of at least twice this many rows as several key ranges at once (one connection each, see --parallel of restore); fewer rows load on one connection")
	registerArchiveURL(f, &w.archiveURL, "object storage that keeps a copy of every published snapshot, under <prefix>/<source>/snapshots/<id>/; a lost backup folder is refreshed from it")
	f.StringVar(&w.targetsFile, "restore-targets", "", "file (mode 0600) of the restore targets this worker may write into, by name (docs/security.md); none: every restore is refused")
	w.retention.register(f)
	f.BoolVar(&w.adHocTargets, "allow-ad-hoc-targets", false, "also restore into a server that `dbtrail restore --target-dsn` on this machine names (its password file in the user's cache folder); off: named targets only")
}

// targets reads the restore targets file (an empty set without one).
func (w *workerConfig) targets() (*target.Set, error) {
	if w.targetsFile == "" {
		return &target.Set{}, nil
	}
	return target.Load(w.targetsFile)
}

// registerArchiveURL registers --archive-url (DBTRAIL_ARCHIVE_URL).
func registerArchiveURL(f *pflag.FlagSet, v *string, what string) {
	f.StringVar(v, "archive-url", "", what+": s3://bucket/prefix?endpoint=...&region=... or a folder (docs/storage.md; keys from the environment or credentials-file=, never in the URL); empty: none")
}

// openArchive opens the store --archive-url names, checked to be usable
// (a missing bucket, wrong keys or an unreachable endpoint fail here,
// naming the bucket and endpoint), or returns nil for "".
func openArchive(ctx context.Context, url string, log *slog.Logger) (storage.Store, error) {
	if url == "" {
		return nil, nil
	}
	s, err := storage.Open(ctx, url, storage.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--archive-url: %w", err)
	}
	log.Info("remote store opened", "location", s.Location())
	return s, nil
}

// activities opens the index and returns the activities with their
// dependencies, among them the worker's engine pool; the caller closes the
// store and acts.Engines when the worker stops.
func (w *workerConfig) activities(cmd *cobra.Command, g *globals) (acts *activities.Activities, store *index.Store, err error) {
	dsn, err := w.sourceDSN.resolve(g.fromArgs)
	if err != nil {
		return nil, nil, err
	}
	targets, err := w.targets()
	if err != nil {
		return nil, nil, err
	}
	policy, err := w.retention.policy()
	if err != nil {
		return nil, nil, err
	}
	secrets, err := target.SecretsDir()
	if err != nil && w.adHocTargets {
		return nil, nil, fmt.Errorf("--allow-ad-hoc-targets: %w", err)
	}
	archive, err := openArchive(cmd.Context(), w.archiveURL, g.log)
	if err != nil {
		return nil, nil, err
	}
	if store, err = openIndex(cmd, g); err != nil {
		return nil, nil, err
	}
	if err := store.Init(cmd.Context()); err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("init index: %w", err)
	}
	backup, err := filepath.Abs(w.backupDir)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	work := w.workDir
	if work == "" {
		work = filepath.Join(backup, ".work")
	}
	if err := tightenFolders(g.fileMode, g.log, folder{"backup", backup}, folder{"work", work}); err != nil {
		store.Close()
		return nil, nil, err
	}
	return &activities.Activities{
		Sources:         map[string]activities.Source{w.source: {Name: w.source, DSN: dsn}},
		Index:           store,
		BackupDir:       backup,
		WorkDir:         work,
		Mydumper:        w.mydumper,
		DumpStall:       w.dumpStall,
		DumpHang:        w.dumpHang,
		FoldMemory:      w.foldMemory,
		Engines:         activities.NewEnginePool(work, w.foldMemory),
		RestorePartRows: w.restorePartRows,
		Remote:          archive,
		Targets:         targets,
		AdHocTargets:    w.adHocTargets,
		AdHocSecrets:    secrets,
		Retention:       policy,
		Log:             g.log,
	}, store, nil
}
