package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/testsuite"
)

// convFixture is the conversion benchmark's table, conv.t of n rows on a
// source server of its own, dumped by mydumper into dir/dump.
type convFixture struct {
	src    *testsuite.Server
	dir    string
	fsys   fs.FS
	tf     dumpfile.TableFiles
	def    *schema.Table
	create string
}

// dumpDir is the fixture's dump folder.
func (f *convFixture) dumpDir() string { return filepath.Join(f.dir, "dump") }

// meta is the footer metadata the fixture's table files are written with.
func (f *convFixture) meta() snapshot.FooterMeta {
	return snapshot.FooterMeta{CreateTable: f.create, SnapshotID: "20261129T000000Z", Source: "bench"}
}

// startConvFixture starts the source, fills conv.t with n rows and dumps
// it; stop removes everything (on error nothing is left).
func startConvFixture(ctx context.Context, n int) (f *convFixture, stop func(), err error) {
	src, err := testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleSource})
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "dbtrail-bench-dump-")
	if err != nil {
		src.Stop()
		return nil, nil, err
	}
	stop = func() { os.RemoveAll(dir); src.Stop() }
	defer func() {
		if err != nil {
			stop()
		}
	}()
	if err := src.Exec(ctx, "CREATE DATABASE conv", `CREATE TABLE conv.t (
		id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(100), c DATETIME(6), d DECIMAL(12,2), e DOUBLE, f VARCHAR(200))`); err != nil {
		return nil, nil, err
	}
	for i := 0; i < n; i += 100000 {
		if err := src.Exec(ctx, fmt.Sprintf(`INSERT INTO conv.t SELECT seq, seq %% 1000, CONCAT('name-', seq), '2026-11-29 08:00:00.123456' + INTERVAL seq SECOND,
			seq / 7, seq * 1.5, REPEAT('f', 20 + seq %% 80) FROM conv.seq_%d_to_%d`, i+1, min(i+100000, n))); err != nil {
			return nil, nil, err
		}
	}
	// data_length (the dump's estimate) is InnoDB's statistics, which trail
	// a fresh load until recalculated.
	if err := src.Exec(ctx, "ANALYZE TABLE conv.t"); err != nil {
		return nil, nil, err
	}
	f = &convFixture{src: src, dir: dir}
	if err := mydumper(ctx, src, f.dumpDir()); err != nil {
		return nil, nil, err
	}
	f.fsys = os.DirFS(f.dumpDir())
	tables, _, err := dumpfile.ListTables(f.fsys)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range tables {
		if t.Schema == "conv" && t.Table == "t" {
			f.tf = t
		}
	}
	if f.def, f.create, err = dumpconv.Definition(f.fsys, "conv", "t", f.tf.SchemaFile); err != nil {
		return nil, nil, err
	}
	return f, stop, nil
}

// benchConvert dumps a table of n rows with mydumper and converts it to a
// table file as ConvertTable does; in the same run, interleaved, it writes
// the same rows, already in Arrow columns, with arrow-go's pqarrow and zstd
// (the raw rate).
func benchConvert(ctx context.Context, n int) ([]result, error) {
	f, stop, err := startConvFixture(ctx, n)
	if err != nil {
		return nil, err
	}
	defer stop()
	src, dir, fsys, tf, def, create := f.src, f.dir, f.fsys, f.tf, f.def, f.create
	innodb, err := innodbSize(ctx, src)
	if err != nil {
		return nil, err
	}
	// The machine is noisy: both sides run three times, interleaved, and the
	// best of each counts. Both write a file in the same folder.
	out := filepath.Join(dir, "t.parquet")
	var conv, raw measure
	var res snapshot.WriteResult
	var pairs []string
	m0, err := readCPUSample()
	if err != nil {
		return nil, err
	}
	load0 := loadAverage()
	for range 3 {
		r, c, err := convertOnce(ctx, fsys, tf, def, create, out)
		if err != nil {
			return nil, err
		}
		res = r
		w, err := rawArrowWrite(out, filepath.Join(dir, "raw.parquet"))
		if err != nil {
			return nil, err
		}
		conv, raw = conv.best(c), raw.best(w)
		pairs = append(pairs, fmt.Sprintf("%.2f", c.rate/w.rate))
	}
	m1, err := readCPUSample()
	if err != nil {
		return nil, err
	}
	m := m1.minus(m0)
	busy := 100 * float64(m.busy) / float64(max(m.total, 1))
	ratio := conv.rate / raw.rate
	return []result{
		{"full backup: rows in dump", strconv.FormatInt(res.Rows, 10), "", "mydumper 0.10, 7 columns, --rows 500000"},
		{"full backup: dump → Parquet conversion", fmt.Sprintf("%.0f rows/s", conv.rate), "",
			fmt.Sprintf("pipeline: statement parser ∥ canonical form + Arrow columns ∥ zstd Parquet (docs/snapshot-format.md#converting-a-dump); best of 3; CPU %.2f s per million rows", conv.cpuPerM)},
		{"full backup: arrow-go raw zstd write", fmt.Sprintf("%.0f rows/s", raw.rate), "",
			fmt.Sprintf("the same rows read back as Arrow columns, written by pqarrow.WriteTable: zstd default level, %d-row groups, stored schema, to a file; best of 3; CPU %.2f s per million rows", snapshot.DefaultRowGroupRows, raw.cpuPerM)},
		judged("full backup: ratio conversion / raw", fmt.Sprintf("%.2f", ratio),
			fmt.Sprintf("pairs %s; machine CPU busy %.0f%% of %d cores during the runs, load average %s → %s",
				strings.Join(pairs, " / "), busy, runtime.NumCPU(), load0, loadAverage()), measured(ratio, atLeast(0.9, "%.2f"))),
		{"full backup: Parquet size / InnoDB size", fmt.Sprintf("%.2f", float64(res.Bytes)/float64(innodb)),
			"", fmt.Sprintf("%d MiB / %d MiB (data + indexes)", res.Bytes>>20, innodb>>20)},
	}, nil
}

// measure is one timed run: rows per wall second and CPU seconds of this
// process per million rows.
type measure struct {
	rate, cpuPerM float64
}

// best keeps the faster of m and o.
func (m measure) best(o measure) measure {
	if o.rate > m.rate {
		return o
	}
	return m
}

// timed runs fn, which handles rows rows, and measures it.
func timed(rows func() int64, fn func() error) (measure, error) {
	cpu0, began := processCPU(), time.Now()
	if err := fn(); err != nil {
		return measure{}, err
	}
	wall, cpu := time.Since(began), processCPU()-cpu0
	n := float64(rows())
	return measure{rate: n / wall.Seconds(), cpuPerM: cpu.Seconds() / n * 1e6}, nil
}

// processCPU is this process's user + system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the machine's 1-minute load average, "?" when unreadable.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func innodbSize(ctx context.Context, src *testsuite.Server) (int64, error) {
	db, err := src.DB(ctx, "conv")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE t"); err != nil {
		return 0, err
	}
	var size int64
	err = db.QueryRowContext(ctx, `SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'conv' AND TABLE_NAME = 't'`).Scan(&size)
	return size, err
}

func mydumper(ctx context.Context, src *testsuite.Server, out string) error {
	cnf := out + ".cnf"
	if err := os.WriteFile(cnf, []byte("[mydumper]\npassword="+src.Password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(cnf)
	cmd := exec.CommandContext(ctx, "mydumper", "--defaults-file", cnf, "--host", "127.0.0.1", "--port", strconv.Itoa(src.Port),
		"--user", src.User, "--database", "conv", "--outputdir", out, "--rows", "500000", "--trx-consistency-only", "--threads", "2")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mydumper: %w: %s", err, b)
	}
	return nil
}

// rawArrowWrite reads the converted file into Arrow columns once, then times
// writing them to out with pqarrow as the table writer does: zstd at its
// default level, row groups of DefaultRowGroupRows (the file's own), the
// Arrow schema stored.
func rawArrowWrite(path, out string) (measure, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return measure{}, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return measure{}, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return measure{}, err
	}
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(int64(snapshot.DefaultRowGroupRows)))
	f, err := os.Create(out)
	if err != nil {
		return measure{}, err
	}
	defer f.Close()
	defer os.Remove(out)
	return timed(tbl.NumRows, func() error {
		return pqarrow.WriteTable(tbl, f, int64(snapshot.DefaultRowGroupRows), props,
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	})
}

// convertOnce converts the dumped table into out as ConvertTable does
// (Parquet written in a goroutine of the writer's own) and measures it.
func convertOnce(ctx context.Context, fsys fs.FS, tf dumpfile.TableFiles, def *schema.Table, create, out string) (snapshot.WriteResult, measure, error) {
	f, err := os.Create(out)
	if err != nil {
		return snapshot.WriteResult{}, measure{}, err
	}
	defer f.Close()
	var res snapshot.WriteResult
	m, err := timed(func() int64 { return res.Rows }, func() error {
		tw, err := snapshot.NewTableWriter(f, def, snapshot.FooterMeta{CreateTable: create, SnapshotID: "20261129T000000Z", Source: "bench"},
			snapshot.WriterOptions{Overlap: true})
		if err != nil {
			return err
		}
		defer tw.Abort()
		if err := dumpconv.Convert(ctx, fsys, tf.DataFiles, def, tw, nil); err != nil {
			return err
		}
		res, err = tw.Close()
		return err
	})
	if err != nil {
		return snapshot.WriteResult{}, measure{}, err
	}
	return res, m, f.Close()
}
