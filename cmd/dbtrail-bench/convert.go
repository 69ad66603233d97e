package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/room"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/testsuite"
)

// benchConvert dumps a table of n rows with mydumper and converts it to a
// table file as ConvertTable does; in the same run, interleaved, it writes
// the same rows, already in Arrow columns, with arrow-go's pqarrow and zstd
// (the raw rate).
func benchConvert(ctx context.Context, n int) ([]result, error) {
	src, err := testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleSource})
	if err != nil {
		return nil, err
	}
	defer src.Stop()
	if err := src.Exec(ctx, "CREATE DATABASE conv", `CREATE TABLE conv.t (
		id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(100), c DATETIME(6), d DECIMAL(12,2), e DOUBLE, f VARCHAR(200))`); err != nil {
		return nil, err
	}
	for i := 0; i < n; i += 100000 {
		if err := src.Exec(ctx, fmt.Sprintf(`INSERT INTO conv.t SELECT seq, seq %% 1000, CONCAT('name-', seq), '2026-11-29 08:00:00.123456' + INTERVAL seq SECOND,
			seq / 7, seq * 1.5, REPEAT('f', 20 + seq %% 80) FROM conv.seq_%d_to_%d`, i+1, min(i+100000, n))); err != nil {
			return nil, err
		}
	}
	innodb, err := innodbSize(ctx, src)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "dbtrail-bench-dump-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := mydumper(ctx, src, filepath.Join(dir, "dump")); err != nil {
		return nil, err
	}
	fsys := os.DirFS(filepath.Join(dir, "dump"))
	tables, _, err := dumpfile.ListTables(fsys)
	if err != nil {
		return nil, err
	}
	var tf dumpfile.TableFiles
	for _, t := range tables {
		if t.Schema == "conv" && t.Table == "t" {
			tf = t
		}
	}
	def, create, err := dumpconv.Definition(fsys, "conv", "t", tf.SchemaFile)
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
	meta := snapshot.FooterMeta{CreateTable: create, SnapshotID: "20261129T000000Z", Source: "bench"}
	rooms, err := dumpRoom(ctx, src, filepath.Join(dir, "dump"), tf, def, meta, uint64(res.Bytes))
	if err != nil {
		return nil, err
	}
	ratio := conv.rate / raw.rate
	return []result{
		{"full backup: rows in dump", strconv.FormatInt(res.Rows, 10), "", "mydumper 0.10, 7 columns, --rows 500000"},
		{"full backup: dump → Parquet conversion", fmt.Sprintf("%.0f rows/s", conv.rate), "",
			fmt.Sprintf("pipeline: statement parser ∥ canonical form + Arrow columns ∥ zstd Parquet (docs/snapshot-format.md#converting-a-dump); best of 3; CPU %.2f s per million rows", conv.cpuPerM)},
		{"full backup: arrow-go raw zstd write", fmt.Sprintf("%.0f rows/s", raw.rate), "",
			fmt.Sprintf("the same rows read back as Arrow columns, written by pqarrow.WriteTable: zstd default level, %d-row groups, stored schema, to a file; best of 3; CPU %.2f s per million rows", snapshot.DefaultRowGroupRows, raw.cpuPerM)},
		{"full backup: ratio conversion / raw", fmt.Sprintf("%.2f", ratio), "≥ 0.90",
			fmt.Sprintf("%s; pairs %s; machine CPU busy %.0f%% of %d cores during the runs, load average %s → %s", verdict(ratio >= 0.9),
				strings.Join(pairs, " / "), busy, runtime.NumCPU(), load0, loadAverage())},
		{"full backup: Parquet size / InnoDB size", fmt.Sprintf("%.2f", float64(res.Bytes)/float64(innodb)),
			"", fmt.Sprintf("%d MiB / %d MiB (data + indexes)", res.Bytes>>20, innodb>>20)},
		rooms[0], rooms[1],
	}, nil
}

// dumpRoom is the room rows of the dump and the conversion: what each
// wrote (the dump folder, the table file of written bytes) ÷ its estimate
// (room.Dump of the table's data_length; dumpconv.Estimate, ConvertTable's
// estimate, of its data files).
func dumpRoom(ctx context.Context, src *testsuite.Server, dumpDir string, tf dumpfile.TableFiles, def *schema.Table, meta snapshot.FooterMeta, written uint64) ([2]result, error) {
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
	row := func(kind string, written uint64, est room.Estimate, basis string) result {
		x := room.Ratio(written, est.Bytes)
		return result{"room: " + kind + " written ÷ estimate", fmt.Sprintf("%.2f", x), roomTarget,
			fmt.Sprintf("%s; %s written, estimate %s from %s", roomVerdict(x, x), disk.Bytes(written), disk.Bytes(est.Bytes), basis)}
	}
	return [2]result{
		row("dump", dumped, room.Dump(length), "data_length "+disk.Bytes(length)),
		row("convert", written, conv, fmt.Sprintf("the dump's data files %s, a sample of %s converted to %s",
			disk.Bytes(data), disk.Bytes(sample.Text), disk.Bytes(sample.Parquet))),
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
