package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/mydumper"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// dumpSizeTimeout bounds the read of the source's table sizes.
const dumpSizeTimeout = 30 * time.Second

// checkDumpSpace checks the work folder for room for a dump of source into
// dir (of tables only, when not empty) and returns the estimate
// (spaceneed.Dump). A source whose sizes cannot be read is not refused here
// (mydumper then says what is wrong with it): the estimate is not Sure and
// the check is logged as skipped. A table list naming a table the source
// does not have is refused (BadInput).
func (a *Activities) checkDumpSpace(ctx context.Context, source, dir string, tables []mydumper.Table) (spaceneed.Estimate, error) {
	if len(tables) > 0 {
		length, err := a.tablesLength(ctx, source, tables)
		if err != nil {
			return spaceneed.Estimate{}, err
		}
		est := spaceneed.Dump(length)
		return est, a.checkSpace(dir, est, "dump of "+source)
	}
	length, err := a.dataLength(ctx, source)
	if err != nil {
		a.log(ctx).Warn("free space not checked before the dump: the source's table sizes cannot be read", "source", source, "error", err)
		return spaceneed.Estimate{}, nil
	}
	est := spaceneed.Dump(length)
	return est, a.checkSpace(dir, est, "dump of "+source)
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

// tablesLength checks that each of tables is a base table of source (in
// the DSN's database when it names one) and returns their data_length. A
// table it lacks is BadInput, naming it; a source it cannot ask is an
// error to retry.
func (a *Activities) tablesLength(ctx context.Context, source string, tables []mydumper.Table) (uint64, error) {
	src, err := a.source(source)
	if err != nil {
		return 0, err
	}
	cfg, err := driver.ParseDSN(src.DSN)
	if err != nil {
		return 0, nonRetryable(payload.ErrBadConfig, fmt.Errorf("source DSN: %w", err))
	}
	db, err := a.openSource(source)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	q := "SELECT table_schema, table_name, COALESCE(data_length, 0) FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND (table_schema, table_name) IN ((?, ?)" +
		strings.Repeat(", (?, ?)", len(tables)-1) + ")"
	args := make([]any, 0, 2*len(tables))
	for _, t := range tables {
		args = append(args, t.Schema, t.Name)
	}
	qctx, cancel := context.WithTimeout(ctx, dumpSizeTimeout)
	defer cancel()
	rows, err := db.QueryContext(qctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("tables of %s: %w", source, err)
	}
	defer rows.Close()
	found := map[mydumper.Table]bool{}
	var total uint64
	for rows.Next() {
		var t mydumper.Table
		var n uint64
		if err := rows.Scan(&t.Schema, &t.Name, &n); err != nil {
			return 0, fmt.Errorf("tables of %s: %w", source, err)
		}
		found[t] = true // information_schema compares names without case: found holds the exact ones
		total += n
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("tables of %s: %w", source, err)
	}
	var missing []string
	for _, t := range tables {
		if !found[t] || (cfg.DBName != "" && t.Schema != cfg.DBName) {
			missing = append(missing, t.String())
		}
	}
	if len(missing) > 0 {
		return 0, badInput(fmt.Errorf("partial full backup of %s: the source has no table %s", source, strings.Join(missing, ", ")))
	}
	return total, nil
}
