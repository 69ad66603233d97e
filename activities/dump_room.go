package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// dumpTextFactor is how many times the size of the dumped tables as the
// source stores them (information_schema data_length + index_length) their
// dump's text is taken to be. The stored size counts index pages and the
// free space of data pages, which the dump does not write, but a row's
// INSERT text (quoted strings, decimal numbers, column names of
// --complete-insert) is larger than its stored bytes; the two roughly
// cancel, and the factor keeps a quarter more for tables whose statistics
// lag behind their rows (docs/workflows.md).
const dumpTextFactor = 1.25

// dumpSizeTimeout bounds the read of the source's table sizes.
const dumpSizeTimeout = 30 * time.Second

// checkDumpRoom checks the work folder for room for a dump of source into
// dir. A source whose sizes cannot be read is not refused here (mydumper
// then says what is wrong with it); the check is logged as skipped.
func (a *Activities) checkDumpRoom(ctx context.Context, source, dir string) error {
	need, err := a.dumpNeed(ctx, source)
	if err != nil {
		a.log(ctx).Warn("free space not checked before the dump: the source's table sizes cannot be read", "source", source, "error", err)
		return nil
	}
	return a.checkRoom(dir, need, "dump of "+source)
}

// dumpNeed estimates the bytes mydumper writes for source: the data_length
// and index_length of the tables it dumps (the DSN's database, or every
// schema but the system ones) times dumpTextFactor.
func (a *Activities) dumpNeed(ctx context.Context, source string) (uint64, error) {
	src, err := a.source(source)
	if err != nil {
		return 0, err
	}
	cfg, err := driver.ParseDSN(src.DSN)
	if err != nil {
		return 0, err
	}
	db, err := a.openSource(source)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	q := "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND "
	var args []any
	if cfg.DBName != "" {
		q += "table_schema = ?"
		args = append(args, cfg.DBName)
	} else {
		sys := schema.SystemSchemas()
		q += "table_schema NOT IN (?" + strings.Repeat(", ?", len(sys)-1) + ")"
		for _, s := range sys {
			args = append(args, s)
		}
	}
	qctx, cancel := context.WithTimeout(ctx, dumpSizeTimeout)
	defer cancel()
	var stored uint64
	if err := db.QueryRowContext(qctx, q, args...).Scan(&stored); err != nil {
		return 0, fmt.Errorf("size of the tables of %s: %w", source, err)
	}
	return uint64(float64(stored) * dumpTextFactor), nil
}
