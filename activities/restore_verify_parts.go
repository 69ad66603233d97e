package activities

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/verify"
)

// fingerprintTarget fingerprints the loaded table def in the target
// (verify.LiveFingerprint). A table loaded in parts whose primary key is
// of integer columns only is fingerprinted by the same key ranges at
// once, one connection each: the server orders such keys as the load did,
// the ranges' conditions put every row in exactly one of them, and the
// ranges' fingerprints add up to the table's. Any other table is
// fingerprinted in one scan.
func fingerprintTarget(ctx context.Context, db *sql.DB, def *schema.Table, parts []restore.Part) (snapshot.Fingerprint, error) {
	wheres, ok := partConditions(def, parts)
	if !ok {
		fp, _, err := verify.LiveFingerprint(ctx, db, def)
		return fp, err
	}
	fps := make([]snapshot.Fingerprint, len(wheres))
	g, gctx := errgroup.WithContext(ctx)
	for i, w := range wheres {
		g.Go(func() error {
			fp, err := verify.LiveFingerprintWhere(gctx, db, def, w)
			fps[i] = fp
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return snapshot.Fingerprint{}, err
	}
	var fp snapshot.Fingerprint
	for _, f := range fps {
		fp.Merge(f)
	}
	return fp, nil
}

// partConditions are the SQL conditions of parts' key ranges, ok only for
// a table of more than one part whose PRIMARY KEY columns are all
// integers (never NULL, ordered by value by the server and by
// restore.KeyOrder alike).
func partConditions(def *schema.Table, parts []restore.Part) ([]verify.Where, bool) {
	if len(parts) < 2 || def.KeyKind != schema.KeyPrimary || len(def.Key) == 0 {
		return nil, false
	}
	idx, err := def.KeyIndexes()
	if err != nil {
		return nil, false
	}
	cols := make([]string, len(idx))
	for i, j := range idx {
		switch def.Columns[j].Type {
		case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		default:
			return nil, false
		}
		cols[i] = restore.QuoteIdent(def.Columns[j].Name)
	}
	order, err := restore.NewKeyOrder(def)
	if err != nil || order == nil {
		return nil, false
	}
	key := "(" + strings.Join(cols, ",") + ")"
	bound := func(text string) (string, []any, bool) {
		row, err := order.Parse(text, len(def.Columns))
		if err != nil {
			return "", nil, false
		}
		args := make([]any, len(idx))
		for i, j := range idx {
			if row[j].Null {
				return "", nil, false
			}
			args[i] = string(row[j].Text)
		}
		return "(" + strings.TrimSuffix(strings.Repeat("?,", len(idx)), ",") + ")", args, true
	}
	out := make([]verify.Where, len(parts))
	for i, p := range parts {
		var conds []string
		var args []any
		if p.From != "" {
			b, a, ok := bound(p.From)
			if !ok {
				return nil, false
			}
			conds, args = append(conds, key+" >= "+b), append(args, a...)
		}
		if p.To != "" {
			b, a, ok := bound(p.To)
			if !ok {
				return nil, false
			}
			conds, args = append(conds, key+" < "+b), append(args, a...)
		}
		if len(conds) == 0 {
			return nil, false
		}
		out[i] = verify.Where{SQL: strings.Join(conds, " AND "), Args: args}
	}
	return out, true
}

// checkPartsCover refuses parts whose ranges do not follow each other
// (each From the To of the part before): their conditions would not put
// every row in exactly one.
func checkPartsCover(parts []restore.Part) error {
	for i := 1; i < len(parts); i++ {
		if parts[i].From != parts[i-1].To || parts[i].From == "" {
			return fmt.Errorf("part %d starts at %q, part %d ends at %q", i+1, parts[i].From, i, parts[i-1].To)
		}
	}
	return nil
}
