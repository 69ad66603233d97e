package restore

import (
	"context"
	"fmt"
	"strings"
)

// swap puts job's loaded twin in the table's place with one RENAME
// TABLE; an existing table keeps OldTable's name (an earlier one under
// that name is refused, never dropped).
func swap(ctx context.Context, db querier, job Job) (old string, err error) {
	exists, _, err := tableRows(ctx, db, job.Schema, job.Name)
	if err != nil {
		return "", err
	}
	twin, target := Qualified(job.Schema, job.Load), Qualified(job.Schema, job.Name)
	q := "RENAME TABLE " + twin + " TO " + target
	if exists {
		old = OldTable(job.Name)
		if oldExists, _, err := tableRows(ctx, db, job.Schema, old); err != nil {
			return "", err
		} else if oldExists {
			return "", fail(KindTargetNotEmpty, fmt.Errorf("--replace of %s: the name %s.%s for the replaced table is taken (a previous replace?): drop or rename it",
				job.Target(), job.Schema, old))
		}
		q = "RENAME TABLE " + target + " TO " + Qualified(job.Schema, old) + ", " + twin + " TO " + target
	}
	if _, err := db.ExecContext(ctx, q); err != nil {
		return "", fmt.Errorf("swap %s: %w", job.Target(), err)
	}
	return old, nil
}

// CheckDrillSchemas refuses to drop a schema that is not a drill's own
// (DrillSchema's prefix), or any schema when the restore is no drill.
func CheckDrillSchemas(drill bool, schemas []string) error {
	prefix := strings.TrimSuffix(DrillSchema, SchemaPlaceholder)
	for _, s := range schemas {
		if !drill || !strings.HasPrefix(s, prefix) {
			return fail(KindBadInput, fmt.Errorf("schema %s: a restore drops only a drill's own schemas (%s…)", s, prefix))
		}
	}
	return nil
}

// DropDrill drops a drill's scratch schemas (CheckDrillSchemas first)
// and their rows of restore id in the bookkeeping tables, then the
// bookkeeping tables and their schema if they are left empty: a drill
// leaves nothing behind. Schemas that are gone already are fine.
func (t *Target) DropDrill(ctx context.Context, o Options, id string, schemas []string) error {
	for _, s := range schemas {
		if _, err := t.DB.ExecContext(ctx, "DROP DATABASE IF EXISTS "+QuoteIdent(s)); err != nil {
			return fmt.Errorf("drop drill schema %s: %w", s, err)
		}
		for _, tb := range []string{BookkeepingTable, PartsTable} {
			if _, err := t.DB.ExecContext(ctx, "DELETE FROM "+Qualified(o.Bookkeeping(), tb)+
				" WHERE restore_id = ? AND schema_name = ?", id, s); err != nil {
				return fmt.Errorf("drop drill checkpoints of %s: %w", s, err)
			}
		}
	}
	return dropIfEmpty(ctx, t.DB, o.Bookkeeping())
}

// dropIfEmpty drops the bookkeeping tables when they hold no row, and then
// their schema when that holds no table.
func dropIfEmpty(ctx context.Context, db querier, schemaName string) error {
	tables := []string{BookkeepingTable, PartsTable}
	for _, t := range tables {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+Qualified(schemaName, t)).Scan(&n)
		if isNoSuchTable(err) {
			continue
		}
		if err != nil || n > 0 {
			return err
		}
	}
	for _, t := range tables {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+Qualified(schemaName, t)); err != nil {
			return fmt.Errorf("drop the empty bookkeeping table %s: %w", Qualified(schemaName, t), err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", schemaName).Scan(&n); err != nil || n > 0 {
		return err
	}
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+QuoteIdent(schemaName)); err != nil {
		return fmt.Errorf("drop the empty schema %s: %w", schemaName, err)
	}
	return nil
}
