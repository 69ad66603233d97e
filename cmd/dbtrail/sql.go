package main

import (
	"fmt"
	"github.com/dbtrail/dbtrail/api"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/shell"
	"github.com/dbtrail/dbtrail/internal/sqlport"
	"github.com/dbtrail/dbtrail/internal/tail"
)

// sqlConfig is what `dbtrail sql` serves.
type sqlConfig struct {
	q         queryConfig
	addr      string
	tokenFile string
	tlsCert   string
	tlsKey    string
	reqTLS    bool
	timeout   time.Duration
	maxRows   int
	maxBytes  int64
	cacheSize int64
}

// newSQLCmd is `dbtrail sql`: the time-travel SQL port (internal/sqlport).
func newSQLCmd(g *globals) *cobra.Command {
	var c sqlConfig
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Serve the backup read-only over the MySQL protocol: any MySQL client reads any moment",
		Long: "Listen for MySQL clients (loopback; another address with --tls-cert/--tls-key, TLS required) and\n" +
			"answer their reads from the DuckDB views of the backup folder, as `dbtrail query` does: by default\n" +
			"at the newest captured transaction (the live tail, with --index-dsn or DBTRAIL_INDEX_DSN);\n" +
			"SET @@dbtrail_at = 'T' (a time in UTC, seq:N, file:pos, gtid:G or latest) moves the session to moment T,\n" +
			"and SELECT @@dbtrail_cut names the cut.\n" +
			"Users are the tokens of the API's token file: a token's name is the user, its secret the password.\n" +
			"Writes are refused with MySQL error 1290. What is built and what is not: docs/sql-port.md.",
		Example: "  dbtrail sql --backup-dir /backups --token-file /etc/dbtrail/api-tokens\n" +
			"  mariadb -h 127.0.0.1 -P 3307 -u NAME -pSECRET -e \"SET @@dbtrail_at='2026-12-01 10:41:59'; SELECT * FROM shop.orders\"",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.q.check(); err != nil {
				return err
			}
			cfg := sqlport.Config{Addr: c.addr, TokenFile: c.tokenFile, TLSCert: c.tlsCert, TLSKey: c.tlsKey, RequireTLS: c.reqTLS,
				Session: c.q.sessionOptions(),
				Timeout: c.timeout, MaxRows: c.maxRows, MaxBytes: c.maxBytes, CacheBytes: c.cacheSize, Log: g.log}
			if c.q.tail && (g.index.value != "" || cmd.Flags().Changed("tail")) {
				past, closeIndex, err := openPast(cmd, g, c.q.backupDir, c.q.source, c.q.archiveURL)
				if err != nil {
					return fmt.Errorf("--tail: %w", err)
				}
				defer closeIndex()
				cache, err := newTailCache(c.q.tempDir, c.q.tailCacheSize)
				if err != nil {
					return err
				}
				defer closeTailCache(cache)
				cfg.Tail = &tail.Reader{Past: past, MaxEvents: c.q.tailMaxEvents, MemoryLimit: c.q.memoryLimit, Log: g.log, Cache: cache}
			}
			p, err := sqlport.Listen(cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dbtrail sql is listening on %s (MySQL protocol, read-only, tail %t)\n", p.Addr(), cfg.Tail != nil)
			return p.Serve(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.addr, "sql-addr", sqlport.DefaultAddr, "listen address: loopback, or any other with --tls-cert/--tls-key (every connection must then use TLS)")
	f.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate of the port: clients may connect with TLS (with --tls-key)")
	f.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.BoolVar(&c.reqTLS, "require-tls", false, "refuse connections without TLS (error 3159; implied by a --sql-addr not loopback)")
	f.StringVar(&c.tokenFile, "token-file", "", "the API's token file: each token's name is a user, its secret the password (mode 0600; required)")
	f.DurationVar(&c.timeout, "timeout", sqlport.DefaultTimeout, "time limit of one statement")
	f.IntVar(&c.maxRows, "max-rows", sqlport.DefaultMaxRows, "most rows of one answer (more is an error)")
	f.Int64Var(&c.maxBytes, "query-max-bytes", api.DefaultQueryMaxBytes, "largest answer of one statement, its rows as sent, in bytes: a larger one is an error naming this cap")
	f.Int64Var(&c.cacheSize, "cache-size", sqlport.DefaultCacheBytes, "bytes of the tables staged at moments (SET @@dbtrail_at) kept for every connection at the same cut; past it, those no session reads are removed")
	f.StringVar(&c.q.backupDir, "backup-dir", filepath.Join(".dbtrail", "backups"), "backup folder holding <source>/snapshots and <source>/current")
	f.StringVar(&c.q.source, "source", "main", "source name")
	f.StringVar(&c.q.memoryLimit, "memory-limit", "1GB", "DuckDB memory limit of one connection")
	f.IntVar(&c.q.threads, "threads", 2, "DuckDB threads of one connection")
	f.BoolVar(&c.q.tail, "tail", true, "answer at the newest captured transaction and allow SET @@dbtrail_at (needs --index-dsn); --tail=false reads the current snapshot alone")
	f.Int64Var(&c.q.tailMaxEvents, "tail-max-events", tail.DefaultMaxEvents, "largest tail folded (at latest: more answers from the snapshot, with the reason; at a moment: refused)")
	registerTailCache(f, &c.q.tailCacheSize, "tail-cache-size")
	registerArchiveURL(f, &c.q.archiveURL, "archive location the tail reads the hours the index dropped from")
	c.q.format = shell.FormatTable
	return cmd
}
