package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// HistoryVersion names the format of a history file.
const HistoryVersion = "history/1"

// History is what a source's index knows besides its events, kept beside
// the archive files so that a lost index can be rebuilt (reindex):
// every schema history version, capture gap and capture start of the
// source. The archive workflow rewrites it on every run
// (<source>/history.json); the index only ever adds to these tables, so a
// newer file holds everything an older one did.
type History struct {
	Source  string
	Schemas []change.SchemaVersion
	Gaps    []change.Gap
	Starts  []change.Start
}

// The JSON form: explicit names, so the file does not follow Go field names.
type historyJSON struct {
	Format  string       `json:"format"`
	Source  string       `json:"source"`
	Schemas []schemaJSON `json:"schema_history"`
	Gaps    []gapJSON    `json:"capture_gaps"`
	Starts  []startJSON  `json:"capture_starts"`
}

type schemaJSON struct {
	Schema     string        `json:"schema"`
	Table      string        `json:"table"`
	Version    uint32        `json:"version"`
	Seq        uint64        `json:"seq"`
	BinlogFile string        `json:"binlog_file"`
	BinlogPos  uint64        `json:"binlog_pos"`
	DDL        string        `json:"ddl"`
	Definition *schema.Table `json:"definition"`
	CreatedAt  time.Time     `json:"created_at"`
}

type gapJSON struct {
	FromFile   string    `json:"from_file"`
	FromPos    uint64    `json:"from_pos"`
	FromGTID   string    `json:"from_gtid,omitempty"`
	ToFile     string    `json:"to_file"`
	ToPos      uint64    `json:"to_pos"`
	Reason     string    `json:"reason"`
	DetectedAt time.Time `json:"detected_at"`
}

type startJSON struct {
	Seq        uint64    `json:"seq"`
	BinlogFile string    `json:"binlog_file"`
	BinlogPos  uint64    `json:"binlog_pos"`
	Reason     string    `json:"reason"`
	StartedAt  time.Time `json:"started_at"`
}

// MarshalHistory returns h as the bytes of a history file: indented JSON,
// UTC times, in the order given. The same history gives the same bytes.
func MarshalHistory(h History) ([]byte, error) {
	if h.Source == "" {
		return nil, errors.New("history: empty source name")
	}
	out := historyJSON{Format: HistoryVersion, Source: h.Source,
		Schemas: []schemaJSON{}, Gaps: []gapJSON{}, Starts: []startJSON{}}
	for _, v := range h.Schemas {
		out.Schemas = append(out.Schemas, schemaJSON{Schema: v.Schema, Table: v.Table, Version: v.Version, Seq: v.Seq,
			BinlogFile: v.BinlogFile, BinlogPos: v.BinlogPos, DDL: v.DDL, Definition: v.Definition, CreatedAt: v.CreatedAt.UTC()})
	}
	for _, g := range h.Gaps {
		out.Gaps = append(out.Gaps, gapJSON{FromFile: g.FromFile, FromPos: g.FromPos, FromGTID: g.FromGTID,
			ToFile: g.ToFile, ToPos: g.ToPos, Reason: g.Reason, DetectedAt: g.DetectedAt.UTC()})
	}
	for _, st := range h.Starts {
		out.Starts = append(out.Starts, startJSON{Seq: st.Seq, BinlogFile: st.Position.File, BinlogPos: st.Position.Pos,
			Reason: st.Reason, StartedAt: st.StartedAt.UTC()})
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", h.Source, err)
	}
	return append(b, '\n'), nil
}

// ParseHistory reads a history file; name is used in errors. A file of
// another format or source is refused.
func ParseHistory(b []byte, source, name string) (History, error) {
	fail := func(err error) (History, error) { return History{}, &CorruptError{File: name, Err: err} }
	var in historyJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fail(fmt.Errorf("history: %w", err))
	}
	if in.Format != HistoryVersion {
		return fail(fmt.Errorf("history format %q, want %q", in.Format, HistoryVersion))
	}
	if in.Source != source {
		return fail(fmt.Errorf("history of source %q, want %q", in.Source, source))
	}
	h := History{Source: source}
	for _, v := range in.Schemas {
		h.Schemas = append(h.Schemas, change.SchemaVersion{Source: source, Schema: v.Schema, Table: v.Table, Version: v.Version,
			Seq: v.Seq, BinlogFile: v.BinlogFile, BinlogPos: v.BinlogPos, DDL: v.DDL, Definition: v.Definition, CreatedAt: v.CreatedAt})
	}
	for _, g := range in.Gaps {
		h.Gaps = append(h.Gaps, change.Gap{Source: source, FromFile: g.FromFile, FromPos: g.FromPos, FromGTID: g.FromGTID,
			ToFile: g.ToFile, ToPos: g.ToPos, Reason: g.Reason, DetectedAt: g.DetectedAt})
	}
	for _, st := range in.Starts {
		h.Starts = append(h.Starts, change.Start{Source: source, Seq: st.Seq,
			Position: binlogpos.Position{File: st.BinlogFile, Pos: st.BinlogPos}, Reason: st.Reason, StartedAt: st.StartedAt})
	}
	return h, nil
}
