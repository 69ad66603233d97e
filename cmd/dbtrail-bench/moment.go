package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
)

// momentChildEnv, when set, makes dbtrail-bench a child that rebuilds one
// table at a moment (the JSON momentChildConfig in the variable) and prints
// its time: the parent reads the child's peak RSS from its rusage.
const momentChildEnv = "DBTRAIL_BENCH_MOMENT_CHILD"

type momentChildConfig struct {
	DSN, SourceDir, WorkDir, Source, At string
}

// momentRounds is how many times each timed run is repeated (best counts).
const momentRounds = 5

// benchMoment measures rebuilding a table at a moment against the refresh's
// full rewrite of the same table with the same changes, the peak RSS of a
// rebuild folding 1,000,000 changes (in a child process), and the changes
// export against arrow-go's raw zstd write of the same rows.
func benchMoment(ctx context.Context, maxRows int) ([]result, error) {
	env, dir, stop, err := startRefreshEnv(ctx, "moment")
	if err != nil {
		return nil, err
	}
	defer stop()

	// One table of n rows at seq 0, then k changes (window A), then n-k more
	// (window B): a moment after A folds k changes, one after B folds n.
	n := min(1000000, maxRows)
	k := min(100000, n/2)
	began := time.Now()
	tb, err := env.buildTable(n)
	if err != nil {
		return nil, err
	}
	env.acts.Sources[tb.source] = activities.Source{Name: tb.source}
	if err := env.insertWindow(ctx, tb, k); err != nil {
		return nil, err
	}
	if err := env.insertWindow(ctx, tb, n-k); err != nil {
		return nil, err
	}
	last := tb.windows[n-k]
	if err := momentFacts(ctx, env, tb, last); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "moment: %d-row table with %d + %d changes ready in %s\n", n, k, n-k, time.Since(began).Round(time.Millisecond))

	// Rebuild at A vs the refresh's rewrite of window A, interleaved.
	atA := "seq:" + strconv.FormatUint(tb.windows[k].cut, 10)
	var rebuild, rewrite refreshRun
	eng, err := openEngine(ctx, filepath.Join(dir, "work", "moment-engine"))
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	for round := range momentRounds {
		r, err := env.rebuildOnce(ctx, eng, tb, atA, filepath.Join(dir, "rebuilt.parquet"))
		if err != nil {
			return nil, err
		}
		w, err := env.run(ctx, tb, k, foldplan.ActionRewrite)
		if err != nil {
			return nil, err
		}
		if round == 0 || r.elapsed < rebuild.elapsed {
			rebuild = r
		}
		if round == 0 || w.elapsed < rewrite.elapsed {
			rewrite = w
		}
	}
	ratio := rebuild.elapsed.Seconds() / rewrite.elapsed.Seconds()

	// Peak RSS of a rebuild folding every change.
	atB := "seq:" + strconv.FormatUint(last.cut, 10)
	rss, child, err := env.momentChild(ctx, tb, atB)
	if err != nil {
		return nil, err
	}

	// The changes export of all n changes vs arrow-go's raw write.
	var expRate, rawRate float64
	var exp calls.ExportTableResult
	for round := range 3 {
		staging := filepath.Join(dir, fmt.Sprintf("changes-%d", round))
		res, elapsed, err := env.exportChanges(tb, last.cut, staging)
		if err != nil {
			return nil, err
		}
		exp = res
		expRate = max(expRate, float64(res.Rows)/elapsed.Seconds())
		exported := filepath.Join(staging, filepath.FromSlash(res.Files[0].Path))
		raw, err := rawArrowWrite(exported, exported+".raw")
		if err != nil {
			return nil, err
		}
		rawRate = max(rawRate, raw.rate)
		os.RemoveAll(staging)
	}
	expRatio := expRate / rawRate
	return []result{
		{"moment: table rows", strconv.Itoa(n), "", fmt.Sprintf("the refresh benchmark's table; its table file at seq 0, then %s and %s changes in the index", thousands(k), thousands(n-k))},
		{fmt.Sprintf("moment: rebuild at T, %s changes after the table file", thousands(k)), fmtRun(rebuild), "",
			"plan (cut, snapshot, schema) + the table at T written as a table file; best of " + strconv.Itoa(momentRounds)},
		{fmt.Sprintf("moment: refresh full rewrite, same %s changes", thousands(k)), fmtRun(rewrite), "", "RefreshTable rewrite; best of " + strconv.Itoa(momentRounds) + ", interleaved"},
		judged("moment: ratio rebuild / full rewrite", fmt.Sprintf("%.2f", ratio), "", measured(ratio, atMost(1.5, "%.1f"))),
		judged(fmt.Sprintf("moment: peak RSS, rebuild folding %s changes", thousands(n)), fmt.Sprintf("%.0f MiB", mib(rss)),
			"child process ru_maxrss; rebuild took "+fmtRun(child), measured(mib(rss), atMost(1024, "%.0f MiB"))),
		{fmt.Sprintf("moment: changes export, %s changes", thousands(int(exp.Rows))), fmt.Sprintf("%.0f rows/s", expRate), "",
			fmt.Sprintf("ExportTable (changes): index → typed before/after Parquet, %.1f MiB; best of 3", mib(exp.Files[0].Size))},
		{"moment: arrow-go raw zstd write of the same rows", fmt.Sprintf("%.0f rows/s", rawRate), "", "the export's rows prebuilt as Arrow columns; best of 3"},
		judged("moment: ratio changes export / raw", fmt.Sprintf("%.2f", expRatio), "", measured(expRatio, atLeast(0.5, "%.1f"))),
	}, nil
}

// momentFacts gives the bench source what resolving a moment reads: a
// capture start, the table's schema version and a checkpoint at the last
// window's end.
func momentFacts(ctx context.Context, e *refreshEnv, tb *refreshFixture, last refreshWindow) error {
	tx, err := e.store.Begin(ctx, tb.source, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	start := change.Start{Seq: 0, Position: binlogpos.Position{File: refreshBinlog, Pos: 4}, Reason: "first start", StartedAt: time.Now()}
	if err := tx.RecordStart(ctx, start); err != nil {
		return err
	}
	if err := tx.PutSchemaVersion(ctx, change.SchemaVersion{Schema: refreshSchema, Table: refreshTable, Version: 1, Seq: 0,
		BinlogFile: refreshBinlog, BinlogPos: 4, DDL: "-- bench", Definition: e.def}); err != nil {
		return err
	}
	if err := tx.SaveCheckpoint(ctx, change.Checkpoint{BinlogFile: refreshBinlog, BinlogPos: last.endPos, LastSeq: last.cut,
		LastCommit: time.Now().UTC()}); err != nil {
		return err
	}
	return tx.Commit()
}

// rebuildOnce plans the table at at and writes it as a table file to out
// (what ExportTable does for one table) with eng, timing both.
func (e *refreshEnv) rebuildOnce(ctx context.Context, eng *fold.Engine, tb *refreshFixture, at, out string) (refreshRun, error) {
	past := moment.Past{Source: tb.source, Index: e.store, SourceDir: filepath.Join(e.acts.BackupDir, tb.source)}
	r, _, err := rebuildWith(ctx, past, eng, at, out)
	return r, err
}

// openEngine opens a fold engine as a worker's pool does (FoldMemory
// refreshFoldMemory), in a folder under dir.
func openEngine(ctx context.Context, dir string) (*fold.Engine, error) {
	return fold.Open(ctx, fold.Options{TempDir: dir, MemoryLimit: refreshFoldMemory})
}

// momentChild rebuilds tb at at in a child process and returns its peak
// RSS and the rebuild's time.
func (e *refreshEnv) momentChild(ctx context.Context, tb *refreshFixture, at string) (int64, refreshRun, error) {
	var res rssChildResult
	rss, err := runChild(ctx, "moment", momentChildEnv, momentChildConfig{DSN: e.dsn, SourceDir: filepath.Join(e.acts.BackupDir, tb.source),
		WorkDir: filepath.Join(e.acts.WorkDir, "moment-child"), Source: tb.source, At: at}, &res)
	if err != nil {
		return 0, refreshRun{}, err
	}
	return rss, refreshRun{elapsed: time.Duration(res.Nanos), bytes: res.Bytes}, nil
}

// runMomentChild is the child's side: cfg is the value of momentChildEnv.
func runMomentChild(cfg string) error {
	var c momentChildConfig
	ctx := context.Background()
	store, err := childStore(ctx, cfg, &c)
	if err != nil {
		return err
	}
	defer store.Close()
	eng, err := openEngine(ctx, filepath.Join(c.WorkDir, "engine"))
	if err != nil {
		return err
	}
	defer eng.Close()
	past := moment.Past{Source: c.Source, Index: store, SourceDir: c.SourceDir}
	r, _, err := rebuildWith(ctx, past, eng, c.At, filepath.Join(c.WorkDir, "rebuilt.parquet"))
	if err != nil {
		return err
	}
	return writeChildResult(rssChildResult{Nanos: int64(r.elapsed), Bytes: r.bytes})
}

// rebuildWith plans the bench table app.t of past's source at at
// (Past.Plan) and writes it to out crash-safely through eng, folding the
// whole past's events (Past.Rebuilder), as ExportTable does.
func rebuildWith(ctx context.Context, past moment.Past, eng *fold.Engine, at, out string) (refreshRun, snapshot.WriteResult, error) {
	var res snapshot.WriteResult
	began := time.Now()
	a, err := when.Parse(at)
	if err != nil {
		return refreshRun{}, res, err
	}
	plan, cat, err := past.Plan(ctx, a, moment.Selection{Tables: []string{refreshSchema + "." + refreshTable}})
	if err != nil {
		return refreshRun{}, res, err
	}
	rb := past.Rebuilder(eng, cat)
	t, err := rb.Open(ctx, plan.Tables[0], nil)
	if err != nil {
		return refreshRun{}, res, err
	}
	defer t.Close()
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return refreshRun{}, res, err
	}
	err = atomicfile.Write(out, 0o600, func(w io.Writer) error {
		meta := snapshot.FooterMeta{CreateTable: t.Footer.CreateTable, Position: plan.Cut.Position(), SnapshotID: plan.Base, Source: past.Source}
		var err error
		res, err = t.Write(ctx, meta, w, nil)
		return err
	})
	if err != nil {
		return refreshRun{}, res, err
	}
	return refreshRun{elapsed: time.Since(began), bytes: res.Bytes}, res, nil
}

// exportChanges runs the ExportTable activity of a changes export of
// (0, upto] into staging and times it.
func (e *refreshEnv) exportChanges(tb *refreshFixture, upto uint64, staging string) (calls.ExportTableResult, time.Duration, error) {
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return calls.ExportTableResult{}, 0, err
	}
	r := &calls.ChangesRange{From: moment.Cut{Seq: 0}, Until: moment.Cut{Seq: upto, Landed: true}}
	in := calls.ExportTableInput{Source: tb.source, Format: payload.ExportChanges, Staging: staging,
		Schema: refreshSchema, Name: refreshTable, Range: r, ExportedAt: time.Now().UTC(),
		Spec: calls.ExportSpecHeader{From: "seq:1", Until: "seq:" + strconv.FormatUint(upto+1, 10)}}
	env := newActivityEnv()
	env.RegisterActivity(e.acts)
	began := time.Now()
	val, err := env.ExecuteActivity(e.acts.ExportTable, in)
	elapsed := time.Since(began)
	if err != nil {
		return calls.ExportTableResult{}, 0, err
	}
	var res calls.ExportTableResult
	if err := val.Get(&res); err != nil {
		return calls.ExportTableResult{}, 0, err
	}
	if len(res.Files) != 1 || res.Rows != int64(upto) {
		return calls.ExportTableResult{}, 0, fmt.Errorf("changes export wrote %d files, %d rows; want 1 file of %d", len(res.Files), res.Rows, upto)
	}
	return res, elapsed, nil
}
