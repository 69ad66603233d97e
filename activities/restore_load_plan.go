package activities

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/restore"
)

// PlanRestore decides a restore before anything is written: the moment's
// cut and rebuild plan (through moment.Past, so every form of T and every
// refusal is export --at's), the target table of every table, and the
// checks that refuse it with a clear error first — a target that cannot be
// reached, a name MySQL cannot hold, two tables onto one name, a missing
// privilege, --no-binlog without the privilege, a target table that
// exists and holds rows (without --replace or --into-schema, unless it is
// this very restore's). Its only write is the bookkeeping table (created
// if missing), after every check passed.
func (a *Activities) PlanRestore(ctx context.Context, in PlanRestoreInput) (PlanRestoreResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	sp := in.Spec
	if _, err := a.source(sp.Source); err != nil {
		return PlanRestoreResult{}, err
	}
	if sp.Drill {
		if sp.Replace || sp.IntoSchema != "" && sp.IntoSchema != restore.DrillSchema {
			return PlanRestoreResult{}, nonRetryable(ErrBadInput, fmt.Errorf("a restore drill loads into new schemas %s: not with --replace or --into-schema", restore.DrillSchema))
		}
		sp.IntoSchema = restore.DrillSchema
	}
	at, err := moment.ParseAt(sp.At)
	if err != nil {
		return PlanRestoreResult{}, nonRetryable(ErrBadInput, fmt.Errorf("--at: %w", err))
	}
	if err := checkSpecBounds(sp); err != nil {
		return PlanRestoreResult{}, err
	}
	tg, err := a.openTarget(ctx, sp)
	if err != nil {
		return PlanRestoreResult{}, err
	}
	defer tg.db.Close()
	db, addr := tg.db, tg.addr
	if err := a.checkJobSchemas(tg, sp); err != nil {
		return PlanRestoreResult{}, err
	}
	for i, r := range tg.Replicas {
		rdb, _, err := openServer(ctx, r, fmt.Sprintf("replica %d", i+1))
		if err != nil {
			return PlanRestoreResult{}, err
		}
		rdb.Close()
	}
	plan, _, err := a.past(ctx, sp.Source).Plan(ctx, at, moment.Selection{Schemas: sp.Schemas, Tables: sp.Tables})
	if err != nil {
		return PlanRestoreResult{}, momentErr(err)
	}
	out := PlanRestoreResult{RestoreID: restore.ID(sp.Source, plan.Cut.Seq, sp.Mode(), sp.IntoSchema), TargetAddr: addr, Plan: plan}
	if out.Jobs, err = restoreJobs(out.RestoreID, plan, sp); err != nil {
		return PlanRestoreResult{}, nonRetryable(ErrBadInput, err)
	}
	if err := a.checkJobSchemas(tg, sp, jobSchemas(out.Jobs)...); err != nil {
		return PlanRestoreResult{}, err
	}
	if err := checkPrivileges(ctx, db, sp, out.Jobs); err != nil {
		return PlanRestoreResult{}, err
	}
	if sp.NoBinlog {
		_, release, err := loadSession(ctx, db, true)
		if err != nil {
			return PlanRestoreResult{}, err
		}
		release()
	}
	if err := checkTargets(ctx, db, sp, out.Jobs); err != nil {
		return PlanRestoreResult{}, err
	}
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS " + restore.QuoteIdent(sp.checkpointSchema()), restore.BookkeepingDDL(sp.checkpointSchema()), restore.PartsDDL(sp.checkpointSchema())} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return PlanRestoreResult{}, fmt.Errorf("bookkeeping table on %s: %w", addr, err)
		}
	}
	a.log(ctx).Info("restore planned", "restore", out.RestoreID, "tables", len(out.Jobs), "cut", plan.Cut.Seq, "target", addr)
	return out, nil
}

// restoreJobs maps every table of plan to its target table, refusing a
// name MySQL cannot hold and two tables onto one name.
func restoreJobs(id string, plan moment.Plan, sp RestoreSpec) ([]RestoreTableJob, error) {
	seen := map[string]string{}
	var jobs []RestoreTableJob
	for _, tp := range plan.Tables {
		j := RestoreTableJob{RestoreID: id, Table: tp, Cut: plan.Cut, Schema: restore.TargetSchema(sp.IntoSchema, tp.Schema), Name: tp.Table, Load: tp.Table}
		if sp.Replace {
			j.Load = restore.LoadTable(tp.Table)
		}
		if err := restore.CheckIdent("target schema", j.Schema); err != nil {
			return nil, fmt.Errorf("table %s: %w", tp.Key(), err)
		}
		if j.Schema == sp.checkpointSchema() && j.Name == restore.BookkeepingTable {
			return nil, fmt.Errorf("table %s would be restored onto the bookkeeping table %s.%s", tp.Key(), j.Schema, j.Name)
		}
		key := strings.ToLower(j.Target())
		if other, ok := seen[key]; ok {
			return nil, fmt.Errorf("tables %s and %s would both be restored into %s: give --into-schema a {schema} placeholder", other, tp.Key(), j.Target())
		}
		seen[key] = tp.Key().String()
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("no table to restore at %s", sp.At)
	}
	return jobs, nil
}

// checkTargets refuses a target table that exists and holds rows unless
// this restore is loading it (its checkpoint is there) or --replace was
// given; and, under --replace, a twin that holds rows of something else.
func checkTargets(ctx context.Context, db *sql.DB, sp RestoreSpec, jobs []RestoreTableJob) error {
	for _, j := range jobs {
		if _, ok, err := readCheckpoint(ctx, db, sp.checkpointSchema(), j); err != nil || ok {
			if err != nil {
				return err
			}
			continue // this restore's own table: it goes on from the checkpoint
		}
		names := []string{j.Name}
		if sp.Replace {
			names = []string{j.Load}
		}
		for _, n := range names {
			exists, rows, err := tableRows(ctx, db, j.Schema, n)
			if err != nil {
				return fmt.Errorf("target table %s.%s: %w", j.Schema, n, err)
			}
			if exists && rows {
				why := "restore beside it with --into-schema, or replace it with --replace"
				if sp.Replace {
					why = "it is not this restore's: drop it or rename it"
				}
				return nonRetryable(ErrTargetNotEmpty, fmt.Errorf("target table %s.%s exists and holds rows; nothing was written: %s", j.Schema, n, why))
			}
		}
	}
	return nil
}

// checkPrivileges refuses a target user that lacks a privilege the restore
// needs, from information_schema's global and schema privileges of the
// current user (privileges granted through a role are not seen there:
// grant them to the user).
func checkPrivileges(ctx context.Context, db *sql.DB, sp RestoreSpec, jobs []RestoreTableJob) error {
	var user string
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		return fmt.Errorf("target user: %w", err)
	}
	at := strings.LastIndex(user, "@")
	if at < 0 {
		return fmt.Errorf("target user %q: no host part", user)
	}
	grantee := "'" + user[:at] + "'@'" + user[at+1:] + "'"
	need := map[string][]string{sp.checkpointSchema(): {"SELECT", "INSERT", "UPDATE", "CREATE"}}
	for _, j := range jobs {
		p := []string{"SELECT", "INSERT", "UPDATE", "CREATE"}
		if sp.Replace {
			p = append(p, "ALTER", "DROP")
		}
		if sp.Drill {
			p = append(p, "DROP")
		}
		need[j.Schema] = append(need[j.Schema], p...)
	}
	schemas := make([]string, 0, len(need))
	for s := range need {
		schemas = append(schemas, s)
	}
	slices.Sort(schemas)
	for _, s := range schemas {
		have, err := privileges(ctx, db, grantee, s)
		if err != nil {
			return err
		}
		for _, p := range need[s] {
			if !have[p] {
				return nonRetryable(ErrMissingPrivilege, fmt.Errorf("target user %s lacks the %s privilege on schema %s; nothing was written (grant it: GRANT %s ON %s.* TO %s)",
					user, p, s, p, restore.QuoteIdent(s), grantee))
			}
		}
	}
	return nil
}

// privileges are grantee's global privileges and those on schemaName
// (a schema grant's name may be a LIKE pattern).
func privileges(ctx context.Context, db *sql.DB, grantee, schemaName string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?
UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ? AND ? LIKE TABLE_SCHEMA`, grantee, grantee, schemaName)
	if err != nil {
		return nil, fmt.Errorf("target privileges: %w", err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		have[strings.ToUpper(p)] = true
	}
	return have, rows.Err()
}
