package capture

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// PreflightError is a source setting that makes capture impossible. Its
// message says what is wrong and how to fix it.
type PreflightError struct {
	Setting string
	Have    string
	Want    string
	Fix     string
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("source preflight: %s is %q, dbtrail needs %q; fix: %s", e.Setting, e.Have, e.Want, e.Fix)
}

// preflight refuses a source whose binlog cannot give lossless row images and
// warns about settings that weaken capture without breaking it.
func preflight(ctx context.Context, src *sourceConn, log *slog.Logger) error {
	logBin, err := src.variable(ctx, "log_bin")
	if err != nil {
		return err
	}
	if !strings.EqualFold(logBin, "ON") {
		return &PreflightError{Setting: "log_bin", Have: logBin, Want: "ON",
			Fix: "start the source with log-bin (my.cnf: log_bin = binlog) and a server_id; this needs a restart"}
	}
	checks := []struct{ name, want, fix string }{
		{"binlog_format", "ROW", "SET GLOBAL binlog_format = 'ROW' and put binlog_format = ROW in my.cnf; sessions already open keep the old format until they reconnect"},
		{"binlog_row_image", "FULL", "SET GLOBAL binlog_row_image = 'FULL' and put binlog_row_image = FULL in my.cnf"},
	}
	for _, c := range checks {
		v, err := src.variable(ctx, c.name)
		if err != nil {
			return err
		}
		if !strings.EqualFold(v, c.want) {
			return &PreflightError{Setting: c.name, Have: v, Want: c.want, Fix: c.fix}
		}
	}
	meta, err := src.variable(ctx, "binlog_row_metadata")
	if err != nil {
		return err
	}
	if !strings.EqualFold(meta, "FULL") {
		log.Warn("binlog_row_metadata is not FULL: column names cannot be cross-checked against schema history; set binlog_row_metadata = FULL",
			slog.String("binlog_row_metadata", meta))
	}
	if comp, _ := src.variable(ctx, "binlog_transaction_compression"); strings.EqualFold(comp, "ON") {
		log.Info("binlog_transaction_compression is ON: compressed transaction payloads are decoded")
	}
	return warnCascades(ctx, src, log)
}

// warnCascades warns about foreign keys with ON DELETE/UPDATE CASCADE or SET
// NULL: the rows they change are not written to the row binlog, so the index
// cannot see them.
func warnCascades(ctx context.Context, src *sourceConn, log *slog.Logger) error {
	rows, err := src.db.QueryContext(ctx, `
		SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, DELETE_RULE, UPDATE_RULE
		FROM information_schema.REFERENTIAL_CONSTRAINTS
		WHERE DELETE_RULE IN ('CASCADE','SET NULL') OR UPDATE_RULE IN ('CASCADE','SET NULL')`)
	if err != nil {
		return fmt.Errorf("read foreign keys of source: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var schema, table, name, del, upd string
		if err := rows.Scan(&schema, &table, &name, &del, &upd); err != nil {
			return err
		}
		log.Warn("foreign key with cascading action: rows it changes are not in the row binlog and not captured",
			slog.String("table", schema+"."+table), slog.String("constraint", name),
			slog.String("on_delete", del), slog.String("on_update", upd))
	}
	return rows.Err()
}
