package snapshot

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// WriterVersion identifies this writer in footers and Parquet's created_by.
const WriterVersion = "snapshot/1"

// Footer key-value metadata keys of a table file.
const (
	KeyCreateTable   = "dbtrail.create_table"   // CREATE TABLE text
	KeyPosition      = "dbtrail.position"       // JSON of Position
	KeySnapshotID    = "dbtrail.snapshot_id"    // e.g. 20261129T061500Z
	KeySource        = "dbtrail.source"         // source name
	KeyWriterVersion = "dbtrail.writer_version" // WriterVersion of the writer
	KeyRowCount      = "dbtrail.row_count"      // decimal
	KeyFingerprint   = "dbtrail.fingerprint"    // Fingerprint.String()
	KeyTable         = "dbtrail.table"          // JSON of schema.Table
)

// Extra footer keys of an export's table files (docs/time-travel.md) and
// of a restore's staged tables.
const (
	KeyAt           = "dbtrail.at"            // the moment as given
	KeyCut          = "dbtrail.cut"           // JSON of moment.Cut: the transaction it landed on
	KeyBaseSnapshot = "dbtrail.base_snapshot" // the snapshot the table was rebuilt from
	KeyFrom         = "dbtrail.from"          // a changes range's start, as given
	KeyUntil        = "dbtrail.until"         // its end, as given
	KeyRange        = "dbtrail.range"         // JSON of the range's two cuts
	KeyExportedAt   = "dbtrail.exported_at"   // RFC 3339 UTC
	// KeyShape is a changes file's shape number: 1 for the table's shape
	// at the range's start, one more after each schema change that changed
	// its columns.
	KeyShape = "dbtrail.shape"
)

// FooterMeta is the footer metadata of a table file. NewTableWriter takes
// CreateTable, Position, SnapshotID, Source and WriterVersion from its
// caller; Close fills in Rows, Fingerprint and Table. ReadFooter returns all.
type FooterMeta struct {
	CreateTable   string
	Position      binlogpos.Position
	SnapshotID    string
	Source        string
	WriterVersion string // "" means WriterVersion when writing
	Rows          int64
	Fingerprint   Fingerprint
	Table         *schema.Table
	// Extra are more footer pairs, written after the keys above in this
	// order; ReadFooter returns every other pair of the file here. An
	// export at a moment names its moment in them (docs/time-travel.md).
	Extra [][2]string
}

// ExtraValue returns the value of extra footer key key.
func (m FooterMeta) ExtraValue(key string) (string, bool) {
	for _, e := range m.Extra {
		if e[0] == key {
			return e[1], true
		}
	}
	return "", false
}

// KeyByteArrayBytes and KeyBinaryBytes are what a TableWriter measured of
// the rows it wrote (decimal): the PLAIN-encoded size (4-byte length and
// value) of the non-NULL values of its byte-array columns (text and
// binary), and of its binary columns. The column data's sizes in the
// footer are encoded (dictionaries shrink repeated values); these are the
// values' own, for the room estimates (ReadFileStats). Files written
// before them lack them. ReadFooter does not return them.
const (
	KeyByteArrayBytes = "dbtrail.byte_array_bytes"
	KeyBinaryBytes    = "dbtrail.binary_bytes"
)

// measuredKeys are the footer keys the writer adds of its own.
var measuredKeys = []string{KeyByteArrayBytes, KeyBinaryBytes}

// fixedKeys are the footer keys FooterMeta has fields for.
var fixedKeys = []string{KeyCreateTable, KeyPosition, KeySnapshotID, KeySource, KeyWriterVersion, KeyRowCount, KeyFingerprint, KeyTable}

// keyValues returns the footer pairs in a fixed order.
func (m FooterMeta) keyValues() ([][2]string, error) {
	pos, err := json.Marshal(m.Position)
	if err != nil {
		return nil, fmt.Errorf("footer position: %w", err)
	}
	tbl, err := json.Marshal(m.Table)
	if err != nil {
		return nil, fmt.Errorf("footer table: %w", err)
	}
	wv := m.WriterVersion
	if wv == "" {
		wv = WriterVersion
	}
	kv := [][2]string{
		{KeyCreateTable, m.CreateTable},
		{KeyPosition, string(pos)},
		{KeySnapshotID, m.SnapshotID},
		{KeySource, m.Source},
		{KeyWriterVersion, wv},
		{KeyRowCount, strconv.FormatInt(m.Rows, 10)},
		{KeyFingerprint, m.Fingerprint.String()},
		{KeyTable, string(tbl)},
	}
	for _, e := range m.Extra {
		if slices.Contains(fixedKeys, e[0]) || slices.Contains(measuredKeys, e[0]) || e[0] == "ARROW:schema" {
			return nil, fmt.Errorf("footer: extra key %s is reserved", e[0])
		}
		kv = append(kv, e)
	}
	return kv, nil
}

// ReadFooter reads the footer metadata of the table file at path without
// reading its data. It does not check the file's digest: use Snapshot.Verify
// first for a file of a snapshot. A missing or malformed key is an error.
func ReadFooter(path string) (FooterMeta, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return FooterMeta{}, fmt.Errorf("read footer %s: %w", path, err)
	}
	defer r.Close()
	m, err := footerFrom(r.MetaData().KeyValueMetadata())
	if err != nil {
		return FooterMeta{}, fmt.Errorf("read footer %s: %w", path, err)
	}
	return m, nil
}

func footerFrom(kv metadata.KeyValueMetadata) (FooterMeta, error) {
	get := func(key string) (string, error) {
		v := kv.FindValue(key)
		if v == nil {
			return "", fmt.Errorf("footer has no %s", key)
		}
		return *v, nil
	}
	var m FooterMeta
	var err error
	var pos, rows, fp, tbl string
	for _, f := range []struct {
		key string
		dst *string
	}{
		{KeyCreateTable, &m.CreateTable}, {KeyPosition, &pos}, {KeySnapshotID, &m.SnapshotID},
		{KeySource, &m.Source}, {KeyWriterVersion, &m.WriterVersion}, {KeyRowCount, &rows},
		{KeyFingerprint, &fp}, {KeyTable, &tbl},
	} {
		if *f.dst, err = get(f.key); err != nil {
			return FooterMeta{}, err
		}
	}
	if err := json.Unmarshal([]byte(pos), &m.Position); err != nil {
		return FooterMeta{}, fmt.Errorf("footer %s: %w", KeyPosition, err)
	}
	if m.Rows, err = strconv.ParseInt(rows, 10, 64); err != nil {
		return FooterMeta{}, fmt.Errorf("footer %s: %w", KeyRowCount, err)
	}
	if m.Fingerprint, err = ParseFingerprint(fp); err != nil {
		return FooterMeta{}, fmt.Errorf("footer %s: %w", KeyFingerprint, err)
	}
	if m.Fingerprint.Rows != m.Rows {
		return FooterMeta{}, fmt.Errorf("footer: fingerprint counts %d rows, row count is %d", m.Fingerprint.Rows, m.Rows)
	}
	m.Table = new(schema.Table)
	if err := json.Unmarshal([]byte(tbl), m.Table); err != nil {
		return FooterMeta{}, fmt.Errorf("footer %s: %w", KeyTable, err)
	}
	keys, vals := kv.Keys(), kv.Values()
	for i, k := range keys {
		if strings.HasPrefix(k, "dbtrail.") && !slices.Contains(fixedKeys, k) && !slices.Contains(measuredKeys, k) {
			m.Extra = append(m.Extra, [2]string{k, vals[i]})
		}
	}
	return m, nil
}
