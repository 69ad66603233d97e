package main

import (
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/index"
)

func newInitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create or upgrade the index schema (idempotent)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openIndex(cmd, g)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.Init(cmd.Context()); err != nil {
				return fmt.Errorf("init index: %w", err)
			}
			g.log.Info("index schema is up to date")
			return nil
		},
	}
}

func openIndex(cmd *cobra.Command, g *globals) (*index.Store, error) {
	dsn, err := g.index.resolve(g.fromArgs)
	if err != nil {
		return nil, err
	}
	if cfg, err := mysql.ParseDSN(dsn); err == nil && cfg.DBName == "" {
		return nil, fmt.Errorf("the index DSN names no database: add one, e.g. user@tcp(host:3306)/dbtrail (%s)", index.RedactDSN(dsn))
	}
	store, err := index.Open(cmd.Context(), dsn)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", index.RedactDSN(dsn), err)
	}
	return store, nil
}
