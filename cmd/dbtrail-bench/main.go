// Command dbtrail-bench measures dbtrail against the libraries it is built on,
// side by side in one run on real servers, and writes a Markdown results
// table. Figures are ratios; absolute rates depend on the machine.
//
//	dbtrail-bench --out bench-results/results.md [--events 1000000] [--bulk-events 1000000] [--oltp-events 1000000] [--archived-rows 1000000] [--restore-rows 1000000] [--freshness-seconds 180] [--space-rows 1000000] [--ddl-tables 50] [--ddl-rows 200000] [--objects-rows 1000000] [--objects-refreshes 36] [--sqlport-rows 1000000] [--only capture,convert,refresh,moment,archive,archived,scale,restore,freshness,space,ddl,objects,sqlport]
//
// A run of some benchmarks keeps the rows of the others in the results file.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
)

// result is one row of the results table.
type result struct {
	name   string
	value  string
	target string
	note   string
}

// stamped is a row of the results file: a result and the run that
// measured it (thisRun's text: its date and commit), this run's for the
// rows it measured, their own for rows kept from an earlier run.
type stamped struct {
	result
	run string
}

func main() {
	if cfg := os.Getenv(momentChildEnv); cfg != "" {
		if err := runMomentChild(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "dbtrail-bench moment child:", err)
			os.Exit(1)
		}
		return
	}
	if cfg := os.Getenv(restoreChildEnv); cfg != "" {
		if err := runRestoreChild(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "dbtrail-bench restore child:", err)
			os.Exit(1)
		}
		return
	}
	if cfg := os.Getenv(rssChildEnv); cfg != "" {
		if err := runRSSChild(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "dbtrail-bench child:", err)
			os.Exit(1)
		}
		return
	}
	out := flag.String("out", "bench-results/results.md", "Markdown file to write")
	events := flag.Int("events", 1000000, "row events of the capture benchmark's batch workload (and of the archive benchmark's)")
	bulkEvents := flag.Int("bulk-events", 1000000, "row events of the capture benchmark's bulk-load workload (wide rows, multi-row INSERTs), 0 to skip it")
	oltpEvents := flag.Int("oltp-events", 1000000, "row events of the capture benchmark's interleaved OLTP workload, 0 to skip it")
	convRows := flag.Int("convert-rows", 1000000, "rows of the full backup conversion benchmark's table")
	refreshMax := flag.Int("refresh-rows-max", 5000000, "largest table of the refresh benchmark (smaller tables make a quick run)")
	scaleTables := flag.Int("scale-tables", 40, "changed tables of the scale benchmark's refresh")
	scaleRows := flag.Int("scale-rows", 200000, "rows of each table of the scale benchmark")
	scaleRounds := flag.Int("scale-rounds", 3, "change + refresh rounds of the scale benchmark (the best of each configuration counts)")
	archivedRows := flag.Int("archived-rows", 1000000, "rows of the archived benchmark's rebuilt table (its changes a tenth of them, its history workload's hours a twentieth each; smaller makes a quick run)")
	restoreRows := flag.Int("restore-rows", 1000000, "rows of the restore benchmark's table (smaller makes a quick run)")
	freshSeconds := flag.Int("freshness-seconds", 180, "seconds of traffic of the freshness benchmark")
	freshRate := flag.Int("freshness-rate", 340, "transactions a second of the freshness benchmark's workload")
	spaceN := flag.Int("space-rows", 1000000, "rows of the space benchmark's dumped table and refreshed table (its window a tenth of them)")
	ddlTables := flag.Int("ddl-tables", 50, "tables of the ddl benchmark (at least 8)")
	ddlRows := flag.Int("ddl-rows", 200000, "rows of each table of the ddl benchmark (smaller makes a quick run)")
	objectsRows := flag.Int("objects-rows", 1000000, "rows of the objects benchmark's table (1% of them change per refresh)")
	objectsRefreshes := flag.Int("objects-refreshes", 36, "refreshes of the objects benchmark (at most 99)")
	only := flag.String("only", "capture,convert,refresh,moment,archive,archived,scale,restore,freshness,space,ddl,objects,sqlport", "benchmarks to run, a comma list of capture, convert, refresh, moment, archive, archived, scale, restore, freshness, space, ddl, objects, sqlport")
	sqlRows := flag.Int("sqlport-rows", 1000000, "rows of the sqlport benchmark's table (smaller makes a quick run)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run here")
	memprofile := flag.String("memprofile", "", "write a heap profile (allocations of the whole run) here at its end")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dbtrail-bench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	run := map[string]bool{}
	for _, name := range strings.Split(*only, ",") {
		name = strings.TrimSpace(name)
		if len(rowPrefix[name]) == 0 {
			fmt.Fprintf(os.Stderr, "dbtrail-bench: --only: unknown benchmark %q (capture, convert, refresh, moment, archive, archived, scale, restore, freshness, space, ddl, objects, sqlport)\n", name)
			os.Exit(2)
		}
		run[name] = true
	}
	var results []result
	var err error
	for _, b := range []struct {
		name string
		fn   func() ([]result, error)
	}{
		{"capture", func() ([]result, error) { return benchCapture(ctx, *events, *bulkEvents, *oltpEvents) }},
		{"convert", func() ([]result, error) { return benchConvert(ctx, *convRows) }},
		{"refresh", func() ([]result, error) { return benchRefresh(ctx, *refreshMax) }},
		{"moment", func() ([]result, error) { return benchMoment(ctx, *refreshMax) }},
		{"archive", func() ([]result, error) { return benchArchive(ctx, *events) }},
		{"archived", func() ([]result, error) { return benchArchived(ctx, *archivedRows) }},
		{"scale", func() ([]result, error) { return benchScale(ctx, *scaleTables, *scaleRows, *scaleRounds) }},
		{"restore", func() ([]result, error) { return benchRestore(ctx, *restoreRows) }},
		{"freshness", func() ([]result, error) { return benchFreshness(ctx, *freshSeconds, *freshRate) }},
		{"space", func() ([]result, error) { return benchSpace(ctx, *spaceN) }},
		{"ddl", func() ([]result, error) { return benchDDL(ctx, *ddlTables, *ddlRows) }},
		{"objects", func() ([]result, error) { return benchObjects(ctx, *objectsRows, *objectsRefreshes) }},
		{"sqlport", func() ([]result, error) { return benchSQLPort(ctx, *sqlRows) }},
	} {
		if !run[b.name] || err != nil {
			continue
		}
		var more []result
		more, err = b.fn()
		results = append(results, more...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbtrail-bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	if *memprofile != "" {
		if err := writeHeapProfile(*memprofile); err != nil {
			fmt.Fprintln(os.Stderr, "dbtrail-bench:", err)
			os.Exit(1)
		}
	}
	if err := checkVerdicts(results); err != nil {
		fmt.Fprintln(os.Stderr, "dbtrail-bench:", err)
		os.Exit(1)
	}
	this := thisRun(time.Now())
	rows := keptRows(*out, run)
	for _, r := range results {
		rows = append(rows, stamped{r, this})
	}
	if err := write(*out, this, rows); err != nil {
		fmt.Fprintln(os.Stderr, "dbtrail-bench:", err)
		os.Exit(1)
	}
	fmt.Print(table(this, rows))
	fmt.Println("written to", *out)
}

// writeHeapProfile writes the heap profile, whose alloc_space and
// alloc_objects cover the whole run, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// table is the results file of the run this (runStamp) with rows rs: its
// header names this run's date and commit; each row names the run that
// measured it.
func table(this string, rs []stamped) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# dbtrail benchmarks\n\n%s, %d cores, %s\n\n", this, runtime.NumCPU(), runtime.Version())
	b.WriteString("Rows whose run column names another run were not rerun by this one: they keep the date and commit of the run that measured them.\n\n")
	b.WriteString("| measure | value | target | note | run |\n|---|---|---|---|---|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.name, r.value, r.target, r.note, r.run)
	}
	return b.String()
}

// write replaces the results file at path crash-safely (temp file, fsync,
// rename), private to its owner as everything dbtrail writes.
func write(path, this string, rs []stamped) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, table(this, rs))
		return err
	})
}

// rowPrefix is how the rows of each benchmark's results begin; capture's
// rows begin "capture (batch): " and "capture (interleaved): " (and
// "capture: " in files written before the interleaved workload).
// the refresh benchmark's also "upload: " (its upload rows).
var rowPrefix = map[string][]string{"capture": {"capture"}, "convert": {"full backup: "}, "refresh": {"refresh: ", "upload: "},
	"moment": {"moment: "}, "archive": {"archive: "}, "archived": {"archived: "}, "scale": {"scale: "}, "restore": {"restore: "},
	"freshness": {"freshness: "}, "space": {"space: "}, "ddl": {"ddl: "}, "objects": {"objects: "}, "sqlport": {"sqlport: "}}

// keptRows returns the rows of path's results table that belong to
// benchmarks not in run, so that a run of some benchmarks keeps the others'
// figures, each with the run that measured it. A row of a file written
// before the run column says it was measured at or before that file's
// header date, by a commit not recorded (oldRun). A missing or unreadable
// file keeps nothing.
func keptRows(path string, run map[string]bool) []stamped {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []stamped
	lines := strings.Split(string(b), "\n")
	for _, line := range lines {
		inner, ok := strings.CutPrefix(line, "| ")
		if inner, ok = strings.CutSuffix(inner, " |"); !ok {
			continue
		}
		cells := strings.Split(inner, " | ")
		if len(cells) == 4 {
			cells = append(cells, oldRun(lines))
		}
		if len(cells) != 5 || cells[0] == "measure" {
			continue
		}
		r := stamped{result{cells[0], cells[1], cells[2], cells[3]}, cells[4]}
		for name, prefixes := range rowPrefix {
			if !run[name] && slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(r.name, p) }) {
				out = append(out, r)
			}
		}
	}
	return out
}

// oldRun is the run of the rows of a results file written before the run
// column: such a file kept earlier runs' rows under its own header date,
// so a row was measured at or before that date (its first line that
// starts with a digit, up to the first comma), by a commit not recorded.
func oldRun(lines []string) string {
	for _, l := range lines {
		if l != "" && l[0] >= '0' && l[0] <= '9' {
			date, _, _ := strings.Cut(l, ",")
			return "at or before " + date + ", commit not recorded"
		}
	}
	return "date and commit not recorded"
}
