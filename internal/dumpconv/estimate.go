package dumpconv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// SampleBytes is how much of a table's data files Estimate converts to
// measure what the table writer makes of them: the prefix ends at the
// last statement end within it.
const SampleBytes = 4 << 20

// maxCutBytes bounds the search for a statement end when none is within
// SampleBytes (a statement larger than it): past it, nothing is sampled.
const maxCutBytes = 64 << 20

// Estimate estimates the table file Convert writes of the table's data
// files (spaceneed.Convert): it converts a prefix of them, about SampleBytes
// cut at a statement's end (all of them when smaller), with the real
// table writer (its output counted, not kept), and scales the bytes
// written to the files' size. Files of at most spaceneed.Floor bytes are not
// sampled. A prefix that cannot be cut or converted, or holds no row,
// gives spaceneed.Convert's upper bound (the conversion itself then reports
// what is wrong with the files); an unreadable file or a cancelled ctx is
// an error. It returns the sample it measured (Text 0: none).
func Estimate(ctx context.Context, fsys fs.FS, files []string, def *schema.Table, meta snapshot.FooterMeta) (spaceneed.Estimate, spaceneed.Converted, error) {
	return estimate(ctx, fsys, files, def, meta, SampleBytes)
}

func estimate(ctx context.Context, fsys fs.FS, files []string, def *schema.Table, meta snapshot.FooterMeta, limit int64) (spaceneed.Estimate, spaceneed.Converted, error) {
	var total uint64
	for _, f := range files {
		st, err := fs.Stat(fsys, f)
		if err != nil {
			return spaceneed.Estimate{}, spaceneed.Converted{}, fmt.Errorf("size of data file %s: %w", f, err)
		}
		total += uint64(st.Size())
	}
	if total <= spaceneed.Floor {
		return spaceneed.Convert(total, spaceneed.Converted{}), spaceneed.Converted{}, nil
	}
	pfs, names, text, err := prefix(fsys, files, limit)
	if err != nil || text == 0 {
		return spaceneed.Convert(total, spaceneed.Converted{}), spaceneed.Converted{}, err
	}
	written, err := convertCounted(ctx, pfs, names, def, meta)
	if ctx.Err() != nil {
		return spaceneed.Estimate{}, spaceneed.Converted{}, ctx.Err()
	}
	if err != nil || written == 0 {
		return spaceneed.Convert(total, spaceneed.Converted{}), spaceneed.Converted{}, nil
	}
	sample := spaceneed.Converted{Text: text, Parquet: written}
	return spaceneed.Convert(total, sample), sample, nil
}

// convertCounted converts files as ConvertTable does and returns the bytes
// of table file written, 0 when they hold no row.
func convertCounted(ctx context.Context, fsys fs.FS, files []string, def *schema.Table, meta snapshot.FooterMeta) (uint64, error) {
	tw, err := snapshot.NewTableWriter(io.Discard, def, meta, snapshot.WriterOptions{})
	if err != nil {
		return 0, err
	}
	defer tw.Abort()
	if err := Convert(ctx, fsys, files, def, tw, nil); err != nil {
		return 0, err
	}
	res, err := tw.Close()
	if err != nil || res.Rows == 0 {
		return 0, err
	}
	return uint64(res.Bytes), nil
}

// prefix is the first files of files that hold about limit bytes, the last
// one cut at a statement's end (cutAt), as an fs.FS of them; text is the
// bytes it holds (0: no statement end was found in the first file).
func prefix(fsys fs.FS, files []string, limit int64) (fs.FS, []string, uint64, error) {
	p := prefixFS{fsys: fsys, cut: map[string]int64{}}
	var names []string
	var text uint64
	for _, f := range files {
		if limit <= 0 {
			break
		}
		st, err := fs.Stat(fsys, f)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("size of data file %s: %w", f, err)
		}
		if st.Size() <= limit {
			names, text, limit = append(names, f), text+uint64(st.Size()), limit-st.Size()
			continue
		}
		n, err := cutAt(fsys, f, limit)
		if err != nil {
			return nil, nil, 0, err
		}
		if n > 0 {
			p.cut[f] = n
			names, text = append(names, f), text+uint64(n)
		}
		break
	}
	return p, names, text, nil
}

// cutAt is the length of the prefix of file name that ends at its last
// statement end (";\n": mydumper escapes a newline within a value) within
// limit bytes, or at the first one past it; 0 when none is within
// maxCutBytes.
func cutAt(fsys fs.FS, name string, limit int64) (int64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, fmt.Errorf("open data file %s: %w", name, err)
	}
	defer f.Close()
	buf := make([]byte, 0, limit+1<<20)
	chunk := make([]byte, 1<<20)
	want := limit
	for int64(len(buf)) < maxCutBytes {
		for int64(len(buf)) < want {
			n, err := f.Read(chunk[:min(int64(len(chunk)), want-int64(len(buf)))])
			buf = append(buf, chunk[:n]...)
			if errors.Is(err, io.EOF) {
				return int64(len(buf)), nil
			}
			if err != nil {
				return 0, fmt.Errorf("read data file %s: %w", name, err)
			}
		}
		if i := bytes.LastIndex(buf, []byte(";\n")); i >= 0 {
			return int64(i + 2), nil
		}
		want += 1 << 20
	}
	return 0, nil
}

// prefixFS is fsys with the files of cut read up to their length there.
type prefixFS struct {
	fsys fs.FS
	cut  map[string]int64
}

func (p prefixFS) Open(name string) (fs.File, error) {
	f, err := p.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	n, ok := p.cut[name]
	if !ok {
		return f, nil
	}
	return &prefixFile{File: f, r: io.LimitReader(f, n)}, nil
}

// prefixFile reads its file up to a cut.
type prefixFile struct {
	fs.File
	r io.Reader
}

func (f *prefixFile) Read(b []byte) (int, error) { return f.r.Read(b) }
