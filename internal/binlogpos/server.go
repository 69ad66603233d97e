package binlogpos

import (
	"context"
	"database/sql"
)

// Files lists the binlog files the server behind db still has, oldest
// first (SHOW BINARY LOGS): the one query of a live server this package
// makes, shared by capture (where to start) and reindex (is the
// checkpoint's file still there).
func Files(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var files []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		files = append(files, string(vals[0]))
	}
	return files, rows.Err()
}
