package archive

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Footer key-value metadata keys of an archive file, written in this order.
const (
	KeyWriterVersion = "dbtrail.writer_version"      // WriterVersion of the writer
	KeySource        = "dbtrail.source"              // source name
	KeyHour          = "dbtrail.archive.hour"        // start of the hour, RFC 3339, UTC
	KeyFirstSeq      = "dbtrail.archive.first_seq"   // decimal; 0 when the file has no events
	KeyLastSeq       = "dbtrail.archive.last_seq"    // decimal; 0 when the file has no events
	KeyEventCount    = "dbtrail.archive.event_count" // decimal
	KeyTables        = "dbtrail.archive.tables"      // JSON array of TableCount, file order
	KeyRowGroups     = "dbtrail.archive.row_groups"  // JSON array of row group entries, file order
)

// Footer is what an archive file says about itself.
type Footer struct {
	WriterVersion string
	Source        string
	// Hour is the start of the UTC hour every event's commit time falls in.
	Hour time.Time
	// FirstSeq and LastSeq are the smallest and greatest seq in the file, 0
	// when it has no events. The hour's seqs need not be contiguous: events
	// of other hours may lie between them.
	FirstSeq, LastSeq uint64
	Events            int64
	// Tables are the tables with events in the file, in file order
	// (schema, then table, byte-wise).
	Tables []TableCount
}

// TableCount is one table's share of an archive file.
type TableCount struct {
	Schema   string `json:"schema"`
	Table    string `json:"table"`
	Events   int64  `json:"events"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
}

// rowGroupEntry describes one row group in the footer: the table it holds
// (an index into Footer.Tables), its rows and seq range, and the byte range of
// its column chunks with their XXH64 digest. A reader checks the range it
// reads against the digest before decoding anything in it.
type rowGroupEntry struct {
	Table    int    `json:"table"`
	Rows     int64  `json:"rows"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Offset   int64  `json:"offset"`
	Bytes    int64  `json:"bytes"`
	XXH64    string `json:"xxh64"`
}

// keyValues returns the footer pairs in their fixed order.
func (f *Footer) keyValues(groups []rowGroupEntry) ([][2]string, error) {
	tables, err := json.Marshal(f.Tables)
	if err != nil {
		return nil, fmt.Errorf("footer %s: %w", KeyTables, err)
	}
	rgs, err := json.Marshal(groups)
	if err != nil {
		return nil, fmt.Errorf("footer %s: %w", KeyRowGroups, err)
	}
	return [][2]string{
		{KeyWriterVersion, f.WriterVersion},
		{KeySource, f.Source},
		{KeyHour, f.Hour.UTC().Format(time.RFC3339)},
		{KeyFirstSeq, strconv.FormatUint(f.FirstSeq, 10)},
		{KeyLastSeq, strconv.FormatUint(f.LastSeq, 10)},
		{KeyEventCount, strconv.FormatInt(f.Events, 10)},
		{KeyTables, string(tables)},
		{KeyRowGroups, string(rgs)},
	}, nil
}

// parseFooter reads the footer pairs. A missing or malformed key, or a writer
// version other than WriterVersion, is an error; consistency between the
// keys and the row groups is checked by the Reader.
func parseFooter(kv metadata.KeyValueMetadata) (Footer, []rowGroupEntry, error) {
	get := func(key string) (string, error) {
		v := kv.FindValue(key)
		if v == nil {
			return "", fmt.Errorf("footer has no %s", key)
		}
		return *v, nil
	}
	var f Footer
	var vals [8]string
	for i, key := range []string{KeyWriterVersion, KeySource, KeyHour, KeyFirstSeq, KeyLastSeq, KeyEventCount, KeyTables, KeyRowGroups} {
		v, err := get(key)
		if err != nil {
			return Footer{}, nil, err
		}
		vals[i] = v
	}
	f.WriterVersion, f.Source = vals[0], vals[1]
	if f.WriterVersion != WriterVersion {
		return Footer{}, nil, fmt.Errorf("footer %s is %q, this reader reads %q", KeyWriterVersion, f.WriterVersion, WriterVersion)
	}
	hour, err := time.Parse(time.RFC3339, vals[2])
	if err != nil || !hour.Equal(hour.Truncate(time.Hour)) || hour.Format(time.RFC3339) != vals[2] || hour.Location() != time.UTC {
		return Footer{}, nil, fmt.Errorf("footer %s %q is not the start of a UTC hour", KeyHour, vals[2])
	}
	f.Hour = hour
	if f.FirstSeq, err = strconv.ParseUint(vals[3], 10, 64); err != nil {
		return Footer{}, nil, fmt.Errorf("footer %s: %w", KeyFirstSeq, err)
	}
	if f.LastSeq, err = strconv.ParseUint(vals[4], 10, 64); err != nil {
		return Footer{}, nil, fmt.Errorf("footer %s: %w", KeyLastSeq, err)
	}
	if f.Events, err = strconv.ParseInt(vals[5], 10, 64); err != nil {
		return Footer{}, nil, fmt.Errorf("footer %s: %w", KeyEventCount, err)
	}
	if err := json.Unmarshal([]byte(vals[6]), &f.Tables); err != nil {
		return Footer{}, nil, fmt.Errorf("footer %s: %w", KeyTables, err)
	}
	var groups []rowGroupEntry
	if err := json.Unmarshal([]byte(vals[7]), &groups); err != nil {
		return Footer{}, nil, fmt.Errorf("footer %s: %w", KeyRowGroups, err)
	}
	return f, groups, nil
}
