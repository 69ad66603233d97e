package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/go-sql-driver/mysql"
)

// VerifyRestore fingerprints a loaded table in the target with verify's
// fingerprint (verify.LiveFingerprint, the function `verify --at` compares
// with) and compares it with the rebuilt table's (its staged table file's
// footer, recorded in the checkpoint). A mismatch fails non-retryably,
// naming the table. Under --replace the verified twin is then swapped in
// with one RENAME TABLE (the old table keeps restore.OldTable's name), so
// readers never see a half-loaded table. The checkpoint ends verified; a
// retry after the swap finds the table swapped and verifies it again.
func (a *Activities) VerifyRestore(ctx context.Context, in VerifyRestoreInput) (VerifyRestoreResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	sp, job := in.Spec, in.Job
	tg, err := a.openTarget(ctx, sp)
	if err != nil {
		return VerifyRestoreResult{}, err
	}
	defer tg.db.Close()
	db := tg.db
	if err := a.checkJobSchemas(tg, sp, job.Schema); err != nil {
		return VerifyRestoreResult{}, err
	}
	cp, ok, err := readCheckpoint(ctx, db, sp.checkpointSchema(), job)
	if err != nil {
		return VerifyRestoreResult{}, err
	}
	if !ok || !cp.Done() {
		return VerifyRestoreResult{}, nonRetryable(ErrBadPlan, fmt.Errorf("verify %s: its load is not finished", job.Target()))
	}
	table := cp.LoadTable
	if cp.State == restore.StateVerified {
		table = job.Name
	} else if job.Load != job.Name {
		if exists, _, err := tableRows(ctx, db, job.Schema, job.Load); err != nil {
			return VerifyRestoreResult{}, err
		} else if !exists {
			table = job.Name // swapped by an attempt that died before it recorded it
		}
	}
	def := *in.Def
	def.Schema, def.Name = job.Schema, table
	parts, err := readParts(ctx, db, sp.checkpointSchema(), job)
	if err != nil {
		return VerifyRestoreResult{}, err
	}
	if err := checkPartsCover(parts); err != nil {
		return VerifyRestoreResult{}, nonRetryable(ErrCheckpointConflict, fmt.Errorf("verify %s: %w", job.Target(), err))
	}
	fp, err := fingerprintTarget(ctx, db, &def, parts)
	if err != nil {
		return VerifyRestoreResult{}, fmt.Errorf("verify %s.%s: %w", job.Schema, table, err)
	}
	if fp.String() != cp.Fingerprint {
		return VerifyRestoreResult{}, nonRetryable(ErrRestoreMismatch, fmt.Errorf("restored table %s.%s does not match %s at the moment: fingerprint %s, rebuilt %s",
			job.Schema, table, job.Table.Key(), fp, cp.Fingerprint))
	}
	res := VerifyRestoreResult{Fingerprint: fp.String(), Rows: fp.Rows}
	if table != job.Name {
		if res.Old, err = swap(ctx, db, job); err != nil {
			return res, err
		}
	}
	if err := setState(ctx, db, sp.checkpointSchema(), job, restore.StateVerified); err != nil {
		return res, err
	}
	a.log(ctx).Info("restored table verified", "table", job.Target(), "rows", fp.Rows, "fingerprint", fp.String())
	return res, nil
}

// swap puts the loaded twin in the table's place with one RENAME TABLE;
// an existing table keeps restore.OldTable's name (an earlier one under
// that name is refused, never dropped).
func swap(ctx context.Context, db querier, job RestoreTableJob) (old string, err error) {
	exists, _, err := tableRows(ctx, db, job.Schema, job.Name)
	if err != nil {
		return "", err
	}
	twin, target := restore.Qualified(job.Schema, job.Load), restore.Qualified(job.Schema, job.Name)
	q := "RENAME TABLE " + twin + " TO " + target
	if exists {
		old = restore.OldTable(job.Name)
		if oldExists, _, err := tableRows(ctx, db, job.Schema, old); err != nil {
			return "", err
		} else if oldExists {
			return "", nonRetryable(ErrTargetNotEmpty, fmt.Errorf("--replace of %s: the name %s.%s for the replaced table is taken (a previous replace?): drop or rename it",
				job.Target(), job.Schema, old))
		}
		q = "RENAME TABLE " + target + " TO " + restore.Qualified(job.Schema, old) + ", " + twin + " TO " + target
	}
	if _, err := db.ExecContext(ctx, q); err != nil {
		return "", fmt.Errorf("swap %s: %w", job.Target(), err)
	}
	return old, nil
}

// EndRestore removes the restore's staged tables from this worker's work
// folder and, for a drill, drops its scratch schemas and their rows in the
// bookkeeping table (then the bookkeeping table and its schema if they are
// left empty). Schemas that are gone already are fine.
func (a *Activities) EndRestore(ctx context.Context, in EndRestoreInput) error {
	if in.RestoreID == "" || strings.ContainsAny(in.RestoreID, `/\.`) {
		return nonRetryable(ErrBadPath, fmt.Errorf("restore id %q", in.RestoreID))
	}
	if err := os.RemoveAll(a.restoreDir(in.RestoreID)); err != nil {
		return fmt.Errorf("remove staged tables of restore %s: %w", in.RestoreID, err)
	}
	if len(in.DropSchemas) == 0 {
		return nil
	}
	drill := strings.TrimSuffix(restore.DrillSchema, restore.SchemaPlaceholder)
	for _, s := range in.DropSchemas {
		if !in.Spec.Drill || !strings.HasPrefix(s, drill) {
			return nonRetryable(ErrBadInput, fmt.Errorf("schema %s: a restore drops only a drill's own schemas (%s…)", s, drill))
		}
	}
	tg, err := a.openTarget(ctx, in.Spec)
	if err != nil {
		return err
	}
	defer tg.db.Close()
	db := tg.db
	if err := a.checkJobSchemas(tg, in.Spec, in.DropSchemas...); err != nil {
		return err
	}
	for _, s := range in.DropSchemas {
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+restore.QuoteIdent(s)); err != nil {
			return fmt.Errorf("drop drill schema %s: %w", s, err)
		}
		for _, t := range []string{restore.BookkeepingTable, restore.PartsTable} {
			if _, err := db.ExecContext(ctx, "DELETE FROM "+restore.Qualified(in.Spec.checkpointSchema(), t)+
				" WHERE restore_id = ? AND schema_name = ?", in.RestoreID, s); err != nil {
				return fmt.Errorf("drop drill checkpoints of %s: %w", s, err)
			}
		}
	}
	return dropIfEmpty(ctx, db, in.Spec.checkpointSchema())
}

// dropIfEmpty drops the bookkeeping tables when they hold no row, and then
// their schema when that holds no table: a drill leaves nothing behind.
func dropIfEmpty(ctx context.Context, db querier, schemaName string) error {
	tables := []string{restore.BookkeepingTable, restore.PartsTable}
	for _, t := range tables {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+restore.Qualified(schemaName, t)).Scan(&n)
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1146 { // no such table
			continue
		}
		if err != nil || n > 0 {
			return err
		}
	}
	for _, t := range tables {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+restore.Qualified(schemaName, t)); err != nil {
			return fmt.Errorf("drop the empty bookkeeping table %s: %w", restore.Qualified(schemaName, t), err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", schemaName).Scan(&n); err != nil || n > 0 {
		return err
	}
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+restore.QuoteIdent(schemaName)); err != nil {
		return fmt.Errorf("drop the empty schema %s: %w", schemaName, err)
	}
	return nil
}
