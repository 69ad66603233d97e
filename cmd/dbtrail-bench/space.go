package main

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/testsuite"
)

// benchSpace measures the room estimates (package room) against what the
// real steps write, written ÷ estimate per step kind: the dump (mydumper)
// and the conversion (ConvertTable's estimate, dumpconv.Estimate) of the
// conversion benchmark's table of n rows, and RefreshTable's pair and
// rewrite of the refresh benchmark's table of n rows for a window of n/10
// changes (the Space its result records). The other kinds are checked
// against their real writers by TestEstimates (internal/room).
func benchSpace(ctx context.Context, n int) ([]result, error) {
	rows, err := convertSpace(ctx, n)
	if err != nil {
		return nil, err
	}
	env, _, stop, err := startRefreshEnv(ctx, "space")
	if err != nil {
		return nil, err
	}
	defer stop()
	tb, err := env.buildTable(n)
	if err != nil {
		return nil, err
	}
	k := max(n/10, 1)
	if err := env.insertWindow(ctx, tb, k); err != nil {
		return nil, err
	}
	var runs []refreshRun
	for _, a := range []foldplan.Action{foldplan.ActionPair, foldplan.ActionRewrite} {
		r, err := env.run(ctx, tb, k, a)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return append(rows, spaceRows(slices.Values(runs))...), nil
}

// convertSpace is the dump's and the conversion's room rows for the
// conversion benchmark's table of n rows.
func convertSpace(ctx context.Context, n int) ([]result, error) {
	f, stop, err := startConvFixture(ctx, n)
	if err != nil {
		return nil, err
	}
	defer stop()
	res, _, err := convertOnce(ctx, f.fsys, f.tf, f.def, f.create, filepath.Join(f.dir, "t.parquet"))
	if err != nil {
		return nil, err
	}
	rows, err := dumpSpace(ctx, f.src, f.dumpDir(), f.tf, f.def, f.meta(), uint64(res.Bytes))
	return rows[:], err
}

// dumpSpace is the room rows of the dump and the conversion: what each
// wrote (the dump folder, the table file of written bytes) ÷ its estimate
// (spaceneed.Dump of the table's data_length; dumpconv.Estimate, ConvertTable's
// estimate, of its data files).
func dumpSpace(ctx context.Context, src *testsuite.Server, dumpDir string, tf dumpfile.TableFiles, def *schema.Table, meta snapshot.FooterMeta, written uint64) ([2]result, error) {
	db, err := src.DB(ctx, "conv")
	if err != nil {
		return [2]result{}, err
	}
	defer db.Close()
	var length uint64
	if err := db.QueryRowContext(ctx, `SELECT DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'conv' AND TABLE_NAME = 't'`).Scan(&length); err != nil {
		return [2]result{}, err
	}
	var dumped, data uint64
	ents, err := os.ReadDir(dumpDir)
	if err != nil {
		return [2]result{}, err
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			dumped += uint64(info.Size())
			if slices.Contains(tf.DataFiles, e.Name()) {
				data += uint64(info.Size())
			}
		}
	}
	conv, sample, err := dumpconv.Estimate(ctx, os.DirFS(dumpDir), tf.DataFiles, def, meta)
	if err != nil {
		return [2]result{}, err
	}
	row := func(kind string, written uint64, est spaceneed.Estimate, basis string) result {
		x := spaceneed.Ratio(written, est.Bytes)
		return judged("space: "+kind+" written ÷ estimate", fmt.Sprintf("%.2f", x),
			fmt.Sprintf("%s written, estimate %s from %s", disk.Bytes(written), disk.Bytes(est.Bytes), basis), measured(x, spaceGoal))
	}
	return [2]result{
		row("dump", dumped, spaceneed.Dump(length), "data_length "+disk.Bytes(length)),
		row("convert", written, conv, fmt.Sprintf("the dump's data files %s, a sample of %s converted to %s",
			disk.Bytes(data), disk.Bytes(sample.Text), disk.Bytes(sample.Parquet))),
	}, nil
}

// spaceGoal is the target of every room row: a step writes between 0.4 and
// 1 times its estimate (never more, rarely far less).
var spaceGoal = within(0.4, 1.0, "%.1f")

// spaceRows reports, per step kind (pair, rewrite), the least and greatest
// actual ÷ estimate of the runs whose estimate is above spaceneed.Floor (a
// floored estimate says nothing of the rule), against the target.
func spaceRows(runs iter.Seq[refreshRun]) []result {
	type span struct {
		lo, hi float64
		n      int
	}
	kinds := map[string]*span{}
	for r := range runs {
		if r.space == nil || r.space.Estimate <= spaceneed.Floor {
			continue
		}
		x := spaceneed.Ratio(r.space.Written, r.space.Estimate)
		sp := kinds[r.space.Kind]
		if sp == nil {
			sp = &span{lo: x, hi: x}
			kinds[r.space.Kind] = sp
		}
		sp.lo, sp.hi, sp.n = min(sp.lo, x), max(sp.hi, x), sp.n+1
	}
	var out []result
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		sp := kinds[k]
		out = append(out, judged("space: "+k+" written ÷ estimate", fmt.Sprintf("%.2f–%.2f", sp.lo, sp.hi),
			fmt.Sprintf("%d runs above the %s floor", sp.n, disk.Bytes(spaceneed.Floor)), measured(sp.lo, spaceGoal), measured(sp.hi, spaceGoal).hide()))
	}
	return out
}
