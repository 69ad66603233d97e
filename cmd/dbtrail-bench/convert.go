package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// benchConvert dumps a table of n rows with mydumper and converts it to a
// table file; in the same run it writes the same rows, already in Arrow
// columns, with arrow-go's pqarrow and zstd (the raw rate).
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
	// best of each counts.
	out := filepath.Join(dir, "t.parquet")
	var convRate, rawRate float64
	var res snapshot.WriteResult
	for range 3 {
		r, rate, err := convertOnce(ctx, fsys, tf, def, create, out)
		if err != nil {
			return nil, err
		}
		res, convRate = r, max(convRate, rate)
		raw, err := rawArrowWrite(out)
		if err != nil {
			return nil, err
		}
		rawRate = max(rawRate, raw)
	}
	ratio := convRate / rawRate
	return []result{
		{"full backup: rows in dump", strconv.FormatInt(res.Rows, 10), "", "mydumper 0.10, 7 columns, --rows 500000"},
		{"full backup: dump → Parquet conversion", fmt.Sprintf("%.0f rows/s", convRate), "", "parse + convert + zstd Parquet; best of 3"},
		{"full backup: arrow-go raw zstd write", fmt.Sprintf("%.0f rows/s", rawRate), "", "same rows prebuilt as Arrow columns; best of 3"},
		{"full backup: ratio conversion / raw", fmt.Sprintf("%.2f", ratio), "≥ 0.60", verdict(ratio >= 0.6)},
		{"full backup: Parquet size / InnoDB size", fmt.Sprintf("%.2f", float64(res.Bytes)/float64(innodb)),
			"", fmt.Sprintf("%d MiB / %d MiB (data + indexes)", res.Bytes>>20, innodb>>20)},
	}, nil
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
// writing them with pqarrow and zstd, row groups as the table writer uses.
func rawArrowWrite(path string) (float64, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return 0, err
	}
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(int64(snapshot.DefaultRowGroupRows)))
	var sink bytes.Buffer
	began := time.Now()
	if err := pqarrow.WriteTable(tbl, io.Writer(&sink), int64(snapshot.DefaultRowGroupRows), props, pqarrow.DefaultWriterProps()); err != nil {
		return 0, err
	}
	return float64(tbl.NumRows()) / time.Since(began).Seconds(), nil
}

// convertOnce converts the dumped table into out and returns its rate.
func convertOnce(ctx context.Context, fsys fs.FS, tf dumpfile.TableFiles, def *schema.Table, create, out string) (snapshot.WriteResult, float64, error) {
	f, err := os.Create(out)
	if err != nil {
		return snapshot.WriteResult{}, 0, err
	}
	defer f.Close()
	began := time.Now()
	tw, err := snapshot.NewTableWriter(f, def, snapshot.FooterMeta{CreateTable: create, SnapshotID: "20261129T000000Z", Source: "bench"}, snapshot.WriterOptions{})
	if err != nil {
		return snapshot.WriteResult{}, 0, err
	}
	if err := dumpconv.Convert(ctx, fsys, tf.DataFiles, def, tw, nil); err != nil {
		return snapshot.WriteResult{}, 0, err
	}
	res, err := tw.Close()
	if err != nil {
		return snapshot.WriteResult{}, 0, err
	}
	return res, float64(res.Rows) / time.Since(began).Seconds(), f.Close()
}
