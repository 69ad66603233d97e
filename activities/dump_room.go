package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/room"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// dumpSizeTimeout bounds the read of the source's table sizes.
const dumpSizeTimeout = 30 * time.Second

// checkDumpRoom checks the work folder for room for a dump of source into
// dir and returns the estimate (room.Dump). A source whose sizes cannot be
// read is not refused here (mydumper then says what is wrong with it):
// the estimate is not Sure and the check is logged as skipped.
func (a *Activities) checkDumpRoom(ctx context.Context, source, dir string) (room.Estimate, error) {
	length, err := a.dataLength(ctx, source)
	if err != nil {
		a.log(ctx).Warn("free space not checked before the dump: the source's table sizes cannot be read", "source", source, "error", err)
		return room.Estimate{}, nil
	}
	est := room.Dump(length)
	return est, a.checkRoom(dir, est, "dump of "+source)
}

// dataLength is the data_length (information_schema, without indexes) of
// the tables mydumper dumps for source: the DSN's database, or every
// schema but the system ones.
func (a *Activities) dataLength(ctx context.Context, source string) (uint64, error) {
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
	q := "SELECT COALESCE(SUM(data_length), 0) FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND "
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
	return stored, nil
}
