package snapshot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// FileRows is the number of rows of the Parquet file at path, from its
// footer (no data is read).
func FileRows(path string) (int64, error) {
	st, err := ReadFileStats(path)
	return st.Rows, err
}

// FileStats is what a Parquet file's footer says of its size: its rows,
// the plain size of its values (Plain: as PLAIN encoding without
// compression writes them) and the part of it in binary columns (byte
// arrays that are not text).
type FileStats struct {
	Rows, Plain, PlainBinary int64
}

// ReadFileStats reads the FileStats of the Parquet file at path from its
// footer (no data is read). Plain is the column data's uncompressed size,
// its byte-array columns' part (encoded: dictionaries shrink repeated
// values) replaced by the values' PLAIN size where the table writer
// measured it (KeyByteArrayBytes) and that is larger; PlainBinary
// likewise (KeyBinaryBytes). Files written before those keys are measured
// by their column data alone.
func ReadFileStats(path string) (FileStats, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return FileStats{}, fmt.Errorf("footer of %s: %w", path, err)
	}
	defer r.Close()
	md := r.MetaData()
	st := FileStats{Rows: r.NumRows()}
	var byteArrays int64
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		st.Plain += rg.TotalByteSize()
		for c := range rg.NumColumns() {
			col := md.Schema.Column(c)
			if col.PhysicalType() != parquet.Types.ByteArray {
				continue
			}
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				continue
			}
			byteArrays += cc.TotalUncompressedSize()
			if !col.LogicalType().Equals(pqschema.StringLogicalType{}) {
				st.PlainBinary += cc.TotalUncompressedSize()
			}
		}
	}
	kv := md.KeyValueMetadata()
	if n, ok := footerInt(kv.FindValue(KeyByteArrayBytes)); ok && n > byteArrays {
		st.Plain += n - byteArrays
	}
	if n, ok := footerInt(kv.FindValue(KeyBinaryBytes)); ok {
		st.PlainBinary = max(st.PlainBinary, n)
	}
	return st, nil
}

// footerInt is a footer value's decimal number; ok is false without one.
func footerInt(v *string) (int64, bool) {
	if v == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(*v, 10, 64)
	return n, err == nil
}

// MeasureTable is what the room estimates (package room) know of table mt
// of the manifest man: its table file's size and rows and its chain's size
// from the manifest; with path (where the snapshot's file rel is on this
// machine; nil: nowhere), the table file's plain size and the sizes and
// rows of the chain's non-empty pairs, from their footers. A file whose
// footer cannot be read is not measured.
func MeasureTable(man *Manifest, mt ManifestTable, path func(rel string) string) spaceneed.Table {
	t := spaceneed.Table{File: man.FilesSize(mt.File), Rows: mt.Rows, Chain: man.FilesSize(mt.Chain...)}
	if path == nil {
		return t
	}
	if st, err := ReadFileStats(path(mt.File)); err == nil {
		t.Plain, t.PlainBinary = uint64(max(st.Plain, 0)), uint64(max(st.PlainBinary, 0))
	}
	for i := 1; i < len(mt.Chain); i++ {
		pd, up := mt.Chain[i-1], mt.Chain[i]
		if !strings.HasSuffix(up, ".upserts") || !strings.HasSuffix(pd, ".posdel") {
			continue
		}
		ups, err1 := FileRows(path(up))
		dels, err2 := FileRows(path(pd))
		if err1 != nil || err2 != nil || ups == 0 {
			continue
		}
		t.PairRows += ups
		t.PosdelRows += dels
		t.PairBytes += man.FilesSize(up, pd)
	}
	return t
}
