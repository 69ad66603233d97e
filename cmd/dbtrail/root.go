package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// globals are the flags every command shares.
type globals struct {
	logLevel  string
	logFormat string
	index     dsnFlag
	fromArgs  map[string]bool
	log       *slog.Logger
	// fileMode is --file-mode, applied to the process (umask) before any
	// command runs.
	fileMode filemode.Policy
}

func newRootCmd() *cobra.Command {
	g := &globals{index: dsnFlag{name: "index-dsn"}}
	root := &cobra.Command{
		Use:           "dbtrail",
		Short:         "An always-current open-format backup of MySQL and MariaDB, built from the binlog",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if g.fromArgs, err = applyEnv(cmd); err != nil {
				return err
			}
			filemode.Apply(g.fileMode)
			g.log, err = newLogger(g.logLevel, g.logFormat)
			if err != nil {
				return err
			}
			slog.SetDefault(g.log)
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	g.index.register(pf, "index database")
	registerFileMode(pf, &g.fileMode)
	root.AddCommand(newInitCmd(g), newCaptureCmd(g), newStatusCmd(g), newDevCmd(g), newWorkerCmd(g), newViewsCmd(g), newBackupCmd(g), newRefreshCmd(g), newExportCmd(g), newVerifyCmd(g), newSnapshotsCmd(g), newQueryCmd(g), newSQLCmd(g), newHistoryCmd(g),
		newArchivesCmd(g), newReindexCmd(g), newRestoreCmd(g), newServeCmd(g), newJobsCmd(g))
	return root
}

func newLogger(level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}
