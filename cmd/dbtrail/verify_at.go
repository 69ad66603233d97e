package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/internal/when"
)

// verifyAt verifies the live tables of db against the tables rebuilt at
// moment at (the moment seam, in this process: past is the index, the
// archived hours and the snapshots, local or on the archive location). It
// returns how many tables mismatched or failed and how many were
// inconclusive.
func verifyAt(ctx context.Context, out io.Writer, past moment.Past, at string, tables []string,
	dsn string, opts verify.Options) (bad, inconclusive int, err error) {
	a, err := when.Parse(at)
	if err != nil {
		return 0, 0, fmt.Errorf("--at: %w", err)
	}
	plan, cat, err := past.Plan(ctx, a, moment.Selection{Tables: tables})
	if err != nil {
		return 0, 0, err
	}
	db, addr, err := openSource(ctx, dsn)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	eng, done, err := moment.OpenScratch(ctx, opts.TempDir, "dbtrail-verify-")
	if err != nil {
		return 0, 0, err
	}
	defer done()
	fmt.Fprintf(out, "verifying %d tables at %s (cut: %s; from snapshot %s) against %s\n", len(plan.Tables), at, plan.Cut, plan.Base, addr)
	rb := past.Rebuilder(eng, cat)
	for _, tp := range plan.Tables {
		t, err := rb.Open(ctx, tp, nil)
		if err != nil {
			bad++
			fmt.Fprintf(out, "%-13s %s  %v\n", "ERROR", tp.Key(), err)
			continue
		}
		res, err := verify.Moment(ctx, db, t, plan.Cut.Position(), opts)
		t.Close()
		b, i := printVerdict(out, res, err)
		bad, inconclusive = bad+b, inconclusive+i
	}
	return bad, inconclusive, nil
}
