package archive

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// WriterVersion identifies this format in the footer (KeyWriterVersion) and
// in Parquet's created_by. A Reader accepts only this version.
const WriterVersion = "archive/1"

// The columns of an archive file, in file order.
const (
	colSeq = iota
	colCommitTime
	colBinlogFile
	colEndPos
	colGTID
	colSchema
	colTable
	colOp
	colPK
	colPKBefore
	colSchemaVersion
	colBefore
	colAfter
	numColumns
)

// columnDef is one column of the format: its Parquet type, whether it may be
// NULL, and how it is encoded.
type columnDef struct {
	name     string
	phys     parquet.Type
	logical  schema.LogicalType
	optional bool
	// dict enables dictionary encoding; otherwise enc is the encoding.
	dict  bool
	enc   parquet.Encoding
	stats bool
}

// columnDefs returns the format's columns. Row group selection relies on
// the statistics of schema_name, table_name and seq; images and keys carry no
// statistics (they would only bloat the footer).
func columnDefs() [numColumns]columnDef {
	return [numColumns]columnDef{
		colSeq:           {name: "seq", phys: parquet.Types.Int64, logical: schema.NewIntLogicalType(64, false), enc: parquet.Encodings.DeltaBinaryPacked, stats: true},
		colCommitTime:    {name: "commit_time", phys: parquet.Types.Int64, logical: schema.NewTimestampLogicalTypeForce(true, schema.TimeUnitMicros), enc: parquet.Encodings.DeltaBinaryPacked, stats: true},
		colBinlogFile:    {name: "binlog_file", phys: parquet.Types.ByteArray, logical: schema.StringLogicalType{}, dict: true, stats: true},
		colEndPos:        {name: "end_pos", phys: parquet.Types.Int64, logical: schema.NewIntLogicalType(64, false), enc: parquet.Encodings.DeltaBinaryPacked, stats: true},
		colGTID:          {name: "gtid", phys: parquet.Types.ByteArray, logical: schema.StringLogicalType{}, optional: true, enc: parquet.Encodings.DeltaByteArray},
		colSchema:        {name: "schema_name", phys: parquet.Types.ByteArray, logical: schema.StringLogicalType{}, dict: true, stats: true},
		colTable:         {name: "table_name", phys: parquet.Types.ByteArray, logical: schema.StringLogicalType{}, dict: true, stats: true},
		colOp:            {name: "op", phys: parquet.Types.ByteArray, logical: schema.StringLogicalType{}, dict: true, stats: true},
		colPK:            {name: "pk", phys: parquet.Types.ByteArray, logical: schema.JSONLogicalType{}, enc: parquet.Encodings.DeltaByteArray},
		colPKBefore:      {name: "pk_before", phys: parquet.Types.ByteArray, logical: schema.JSONLogicalType{}, optional: true, enc: parquet.Encodings.DeltaByteArray},
		colSchemaVersion: {name: "schema_version", phys: parquet.Types.Int32, logical: schema.NewIntLogicalType(32, false), dict: true, stats: true},
		colBefore:        {name: "before_image", phys: parquet.Types.ByteArray, logical: schema.JSONLogicalType{}, optional: true, enc: parquet.Encodings.Plain},
		colAfter:         {name: "after_image", phys: parquet.Types.ByteArray, logical: schema.JSONLogicalType{}, optional: true, enc: parquet.Encodings.Plain},
	}
}

// fileSchema returns the Parquet schema of an archive file.
func fileSchema() (*schema.GroupNode, error) {
	fields := make(schema.FieldList, 0, numColumns)
	for _, c := range columnDefs() {
		rep := parquet.Repetitions.Required
		if c.optional {
			rep = parquet.Repetitions.Optional
		}
		n, err := schema.NewPrimitiveNodeLogical(c.name, rep, c.logical, c.phys, -1, -1)
		if err != nil {
			return nil, fmt.Errorf("archive schema column %s: %w", c.name, err)
		}
		fields = append(fields, n)
	}
	return schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
}

// writerProperties returns the Parquet writer settings of an archive file:
// zstd, each column's encoding and statistics, rows declared sorted by
// (schema_name, table_name, seq), and a created_by that names the format,
// never a library version or a time, so that the same events always give the
// same bytes.
//
// The dictionary size limit is above anything a row group's dictionary
// columns can reach (their distinct values are part of opts.RowGroupBytes,
// plus four bytes a row for schema_version and the length prefixes): a
// column chunk then never falls back from dictionary to plain pages half
// way, which would mix two data page encodings in one chunk, and the
// Parquet library lists the encodings of such a chunk in the footer in map
// order, which is random.
func writerProperties(opts WriterOptions) *parquet.WriterProperties {
	pp := []parquet.WriterProperty{
		parquet.WithDictionaryPageSizeLimit(max(int64(opts.RowGroupBytes)+8*int64(opts.RowGroupRows), 1<<20)),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCreatedBy("dbtrail " + WriterVersion),
		parquet.WithDataPageSize(dataPageSize),
		parquet.WithMaxRowGroupLength(1 << 62), // the Writer cuts row groups itself
		parquet.WithSortingColumns([]parquet.SortingColumn{
			{ColumnIdx: colSchema}, {ColumnIdx: colTable}, {ColumnIdx: colSeq},
		}),
	}
	if opts.ZstdLevel != 0 {
		pp = append(pp, parquet.WithCompressionLevel(opts.ZstdLevel))
	}
	for _, c := range columnDefs() {
		pp = append(pp, parquet.WithDictionaryFor(c.name, c.dict), parquet.WithStatsFor(c.name, c.stats))
		if !c.dict {
			pp = append(pp, parquet.WithEncodingFor(c.name, c.enc))
		}
	}
	return parquet.NewWriterProperties(pp...)
}

// dataPageSize is the target size of a data page: zstd compresses each page
// on its own, and larger pages let it find more repetition between images.
const dataPageSize = 1 << 20
