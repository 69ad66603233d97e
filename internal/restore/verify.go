package restore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/verify"
)

// Verified is a loaded table found equal to the rebuilt one.
type Verified struct {
	Fingerprint string
	Rows        int64
	// Old is the name the replaced table keeps (--replace with an
	// existing table).
	Old string
}

// Verify fingerprints job's loaded table (of definition def) in the
// target with verify's fingerprint (verify.LiveFingerprint, the function
// `verify --at` compares with) and compares it with the rebuilt table's
// (its staged table file's footer, recorded in the checkpoint). A
// mismatch is KindRestoreMismatch, naming the table. Under --replace the
// verified twin is then swapped in with one RENAME TABLE (swap), so
// readers never see a half-loaded table. The checkpoint ends verified; a
// retry after the swap finds the table swapped and verifies it again.
func (t *Target) Verify(ctx context.Context, o Options, job Job, def schema.Table) (Verified, error) {
	db := t.DB
	cp, ok, err := readCheckpoint(ctx, db, o.Bookkeeping(), job)
	if err != nil {
		return Verified{}, err
	}
	if !ok || !cp.Done() {
		return Verified{}, fail(KindBadPlan, fmt.Errorf("verify %s: its load is not finished", job.Target()))
	}
	table := cp.LoadTable
	if cp.State == StateVerified {
		table = job.Name
	} else if job.Load != job.Name {
		if exists, _, err := tableRows(ctx, db, job.Schema, job.Load); err != nil {
			return Verified{}, err
		} else if !exists {
			table = job.Name // swapped by an attempt that died before it recorded it
		}
	}
	def.Schema, def.Name = job.Schema, table
	parts, err := readParts(ctx, db, o.Bookkeeping(), job)
	if err != nil {
		return Verified{}, err
	}
	if err := checkPartsCover(parts); err != nil {
		return Verified{}, fail(KindCheckpointConflict, fmt.Errorf("verify %s: %w", job.Target(), err))
	}
	fp, err := fingerprintTarget(ctx, db, &def, parts)
	if err != nil {
		return Verified{}, fmt.Errorf("verify %s.%s: %w", job.Schema, table, err)
	}
	if fp.String() != cp.Fingerprint {
		return Verified{}, fail(KindRestoreMismatch, fmt.Errorf("restored table %s.%s does not match %s at the moment: fingerprint %s, rebuilt %s",
			job.Schema, table, job.Table.Key(), fp, cp.Fingerprint))
	}
	res := Verified{Fingerprint: fp.String(), Rows: fp.Rows}
	if table != job.Name {
		if res.Old, err = swap(ctx, db, job); err != nil {
			return res, err
		}
	}
	return res, setState(ctx, db, o.Bookkeeping(), job, StateVerified)
}

// fingerprintTarget fingerprints the loaded table def in the target
// (verify.LiveFingerprint). A table loaded in parts whose primary key is
// of integer columns only is fingerprinted by the same key ranges at
// once, one connection each: the server orders such keys as the load did,
// the ranges' conditions put every row in exactly one of them, and the
// ranges' fingerprints add up to the table's. Any other table is
// fingerprinted in one scan.
func fingerprintTarget(ctx context.Context, db *sql.DB, def *schema.Table, parts []Part) (snapshot.Fingerprint, error) {
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
// KeyOrder alike).
func partConditions(def *schema.Table, parts []Part) ([]verify.Where, bool) {
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
		cols[i] = QuoteIdent(def.Columns[j].Name)
	}
	order, err := NewKeyOrder(def)
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
func checkPartsCover(parts []Part) error {
	for i := 1; i < len(parts); i++ {
		if parts[i].From != parts[i-1].To || parts[i].From == "" {
			return fmt.Errorf("part %d starts at %q, part %d ends at %q", i+1, parts[i].From, i, parts[i-1].To)
		}
	}
	return nil
}
