package restore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Prepare runs the checks that refuse a planned restore on the target t
// before anything is written — a missing privilege, --no-binlog without
// its privilege, a target table that exists and holds rows (without
// --replace or --into-schema, unless it is this very restore's) — and
// then creates the bookkeeping tables (and their schema) if missing: its
// only write.
func (t *Target) Prepare(ctx context.Context, o Options, jobs []Job) error {
	if err := checkPrivileges(ctx, t.DB, o, jobs); err != nil {
		return err
	}
	if o.NoBinlog {
		_, release, err := session(ctx, t.DB, true)
		if err != nil {
			return err
		}
		release()
	}
	if err := checkTargets(ctx, t.DB, o, jobs); err != nil {
		return err
	}
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS " + QuoteIdent(o.Bookkeeping()), BookkeepingDDL(o.Bookkeeping()), PartsDDL(o.Bookkeeping())} {
		if _, err := t.DB.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("bookkeeping table on %s: %w", t.Addr, err)
		}
	}
	return nil
}

// checkTargets refuses a target table that exists and holds rows unless
// this restore is loading it (its checkpoint is there) or --replace was
// given; and, under --replace, a twin that holds rows of something else.
func checkTargets(ctx context.Context, db *sql.DB, o Options, jobs []Job) error {
	for _, j := range jobs {
		if _, ok, err := readCheckpoint(ctx, db, o.Bookkeeping(), j); err != nil || ok {
			if err != nil {
				return err
			}
			continue // this restore's own table: it goes on from the checkpoint
		}
		names := []string{j.Name}
		if o.Replace {
			names = []string{j.Load}
		}
		for _, n := range names {
			exists, rows, err := tableRows(ctx, db, j.Schema, n)
			if err != nil {
				return fmt.Errorf("target table %s.%s: %w", j.Schema, n, err)
			}
			if exists && rows {
				why := "restore beside it with --into-schema, or replace it with --replace"
				if o.Replace {
					why = "it is not this restore's: drop it or rename it"
				}
				return fail(KindTargetNotEmpty, fmt.Errorf("target table %s.%s exists and holds rows; nothing was written: %s", j.Schema, n, why))
			}
		}
	}
	return nil
}

// checkPrivileges refuses a target user that lacks a privilege the restore
// needs, from information_schema's global and schema privileges of the
// current user (privileges granted through a role are not seen there:
// grant them to the user).
func checkPrivileges(ctx context.Context, db *sql.DB, o Options, jobs []Job) error {
	var user string
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		return fmt.Errorf("target user: %w", err)
	}
	at := strings.LastIndex(user, "@")
	if at < 0 {
		return fmt.Errorf("target user %q: no host part", user)
	}
	grantee := "'" + user[:at] + "'@'" + user[at+1:] + "'"
	need := map[string][]string{o.Bookkeeping(): {"SELECT", "INSERT", "UPDATE", "CREATE"}}
	for _, j := range jobs {
		p := []string{"SELECT", "INSERT", "UPDATE", "CREATE"}
		if o.Replace {
			p = append(p, "ALTER", "DROP")
		}
		if o.Drill {
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
				return fail(KindMissingPrivilege, fmt.Errorf("target user %s lacks the %s privilege on schema %s; nothing was written (grant it: GRANT %s ON %s.* TO %s)",
					user, p, s, p, QuoteIdent(s), grantee))
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
