package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Bounds of GET /v1/history.
const (
	DefaultHistoryVersions = 100
	MaxHistoryVersions     = 1000
)

// HistoryFunc answers GET /v1/history: the versions of the row of table
// (schema.table) of source whose key is key (a value, or a JSON array for
// a key of several columns, as `dbtrail history --key` takes it), oldest
// first, at most limit. An unknown table or a key that does not parse is
// an *Error naming its field.
type HistoryFunc func(ctx context.Context, source, table, key string, limit int) (History, error)

// History is the answer of GET /v1/history.
type History struct {
	Source   string       `json:"source"`
	Table    string       `json:"table"`
	Key      string       `json:"key"`
	Versions []RowVersion `json:"versions"`
	// Truncated: the row has more versions than the limit.
	Truncated bool `json:"truncated"`
	// Archives reports that the archived hours were read too (the server
	// has an archive location).
	Archives bool `json:"archives"`
}

// RowVersion is one version of a row (`dbtrail history --json` prints
// the same): its event, transaction, key and images (canonical JSON,
// docs/types.md).
type RowVersion struct {
	Seq        uint64          `json:"seq"`
	Op         string          `json:"op"`
	CommitTime time.Time       `json:"commit_time"`
	GTID       string          `json:"gtid,omitempty"`
	BinlogFile string          `json:"binlog_file"`
	EndPos     uint64          `json:"end_pos"`
	Key        json.RawMessage `json:"key"`
	KeyBefore  json.RawMessage `json:"key_before,omitempty"`
	Before     json.RawMessage `json:"before,omitempty"`
	After      json.RawMessage `json:"after,omitempty"`
}

func (s *server) history(w http.ResponseWriter, r *http.Request, _ any) error {
	if s.cfg.History == nil {
		return &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured, Message: "this server has no index (--index-dsn): row histories are off"}
	}
	src, err := s.source(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	table, key := q.Get("table"), q.Get("key")
	if sch, t, ok := strings.Cut(table, "."); !ok || sch == "" || t == "" {
		return badFieldf("table", "table %q: name it as schema.table", table)
	}
	if key == "" {
		return badFieldf("key", "key is required: the row's key value, or a JSON array for a key of several columns")
	}
	limit := DefaultHistoryVersions
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > MaxHistoryVersions {
			return badFieldf("limit", "limit %q: want 1 to %d", v, MaxHistoryVersions)
		}
	}
	h, err := s.cfg.History(r.Context(), src, table, key, limit)
	if err != nil {
		return err
	}
	if h.Versions == nil {
		h.Versions = []RowVersion{}
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}
