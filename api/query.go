package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/jobs"
)

// Bounds of POST /v1/query.
const (
	DefaultQueryRows    = 1000
	MaxQueryRows        = 10000
	DefaultQueryTimeout = 10 * time.Second
	MaxQueryTimeout     = 60 * time.Second
)

// QueryRequest is POST /v1/query: one read-only SQL statement over the
// views of source: the current snapshot plus the changes captured after it
// (the live tail, when the server reads the index; ?tail=false: the
// snapshot alone), or ?snapshot=ID.
type QueryRequest struct {
	SQL    string `json:"sql"`
	Source string `json:"source"`
	// MaxRows bounds the rows answered (default DefaultQueryRows, at most
	// MaxQueryRows); TimeoutMS the time the statement may run (default
	// DefaultQueryTimeout, at most MaxQueryTimeout).
	MaxRows   int `json:"max_rows"`
	TimeoutMS int `json:"timeout_ms"`
}

// Question is what a QueryFunc answers.
type Question struct {
	Source   string
	Snapshot string // "": current
	SQL      string
	MaxRows  int
	// Tail is ?tail: nil answers with the live tail when the server reads
	// an index (and the snapshot alone otherwise), true requires it, false
	// reads the snapshot alone. Never true with a Snapshot.
	Tail *bool
	// At is ?at: a moment (when.Parse's forms; "": the live tail or
	// the snapshot) the answer is cut at. Never with a Snapshot or a Tail
	// false. A moment that cannot be answered exactly is an error naming
	// the reason.
	At string
}

// maxAtLength bounds ?at (a moment's text).
const maxAtLength = 200

// QueryAnswer is the answer of POST /v1/query: each row a JSON array in
// column order (a QueryFunc's rows are written as they are) (DECIMAL exact, times as text), and the transaction the
// answer is cut at.
type QueryAnswer struct {
	Snapshot  string            `json:"snapshot"`
	Cut       QueryCut          `json:"cut"`
	Columns   []string          `json:"columns"`
	Types     []string          `json:"types"`
	Rows      []json.RawMessage `json:"rows"`
	Truncated bool              `json:"truncated"`
}

// QueryCut is the transaction an answer is cut at (docs/tail.md): with the
// live tail, the newest captured transaction (the snapshot plus the
// changes after it, one cut for every table); else the snapshot's
// position, and Reason says why the changes after it are left out when
// the tail was asked for.
type QueryCut struct {
	// Tail reports that the answer is the snapshot plus the changes after
	// it up to the cut.
	Tail bool `json:"tail"`
	// Seq is the last event in the answer; GTID, Binlog (file:pos) and
	// Committed name its transaction (Committed only with the tail).
	Seq       uint64     `json:"seq"`
	GTID      string     `json:"gtid,omitempty"`
	Binlog    string     `json:"binlog"`
	Committed *time.Time `json:"committed,omitempty"`
	// Events and Tables count the changes after the snapshot in the
	// answer.
	Events int64 `json:"events"`
	Tables int   `json:"tables"`
	// Reason is why the tail was left out ("" with the tail, or when it
	// was not asked for).
	Reason string `json:"reason,omitempty"`
	// Text is the line `dbtrail query` prints on standard error.
	Text string `json:"text"`
}

// QueryFunc answers a question in the sandbox (views.SessionOptions.Sandbox)
// until ctx's deadline, the time limit: it returns ctx's error at the
// deadline at the latest. A statement the sandbox or DuckDB refuses is an
// error the caller sees as is; an answer whose rows exceed the server's
// byte cap is an *AnswerTooLarge.
type QueryFunc func(ctx context.Context, q Question) (QueryAnswer, error)

// CodeAnswerTooLarge is the code of a query answer over the byte cap.
const CodeAnswerTooLarge = "answer_too_large"

// AnswerTooLarge is the error of a question whose answer's rows, encoded,
// exceed Cap bytes (serve's --query-max-bytes): 413, naming the cap.
type AnswerTooLarge struct{ Cap int64 }

func (e *AnswerTooLarge) Error() string {
	return fmt.Sprintf("the answer's rows are larger than the server's cap of %d bytes (--query-max-bytes): ask for fewer rows (max_rows, LIMIT) or narrower columns", e.Cap)
}

func (s *server) query(w http.ResponseWriter, r *http.Request, body any) error {
	b := body.(*QueryRequest)
	if s.cfg.Query == nil {
		return &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured, Message: "queries are off: the server has no backup folder (--backup-dir)"}
	}
	if b.SQL == "" {
		return badFieldf("sql", "sql is required")
	}
	if err := s.common(&b.Source, new(string)); err != nil {
		return err
	}
	snap := r.URL.Query().Get("snapshot")
	if snap != "" && snap != "current" {
		if err := jobs.CheckName("snapshot", snap); err != nil {
			return badField("snapshot", err)
		}
	} else {
		snap = ""
	}
	var withTail *bool
	if v := r.URL.Query().Get("tail"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return badFieldf("tail", "tail %q: want true or false", v)
		}
		withTail = &on
	}
	if snap != "" && withTail != nil && *withTail {
		return badFieldf("tail", "tail=true reads the newest snapshot and the changes after it: not with snapshot %s", snap)
	}
	at := strings.TrimSpace(r.URL.Query().Get("at"))
	switch {
	case len(at) > maxAtLength || strings.ContainsAny(at, "\x00\n\r"):
		return badFieldf("at", "at: a moment of at most %d characters on one line", maxAtLength)
	case at != "" && (snap != "" || withTail != nil && !*withTail):
		return badFieldf("at", "at %q reads the tables at a moment (the snapshot before it and the changes up to it): not with snapshot or tail=false", at)
	}
	if b.MaxRows == 0 {
		b.MaxRows = DefaultQueryRows
	}
	if b.MaxRows < 1 || b.MaxRows > MaxQueryRows {
		return badFieldf("max_rows", "max_rows %d: want 1 to %d", b.MaxRows, MaxQueryRows)
	}
	timeout := DefaultQueryTimeout
	if b.TimeoutMS != 0 {
		timeout = time.Duration(b.TimeoutMS) * time.Millisecond
	}
	if timeout <= 0 || timeout > MaxQueryTimeout {
		return badFieldf("timeout_ms", "timeout_ms %d: want 1 to %d", b.TimeoutMS, MaxQueryTimeout.Milliseconds())
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	a, err := s.cfg.Query(ctx, Question{Source: b.Source, Snapshot: snap, SQL: b.SQL, MaxRows: b.MaxRows, Tail: withTail, At: at})
	var big *AnswerTooLarge
	var apiErr *Error
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return &Error{Status: http.StatusRequestTimeout, Code: CodeTimeout, Field: "timeout_ms",
			Message: "the statement ran past its time limit of " + timeout.String()}
	case errors.As(err, &big):
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeAnswerTooLarge, Field: "sql", Message: big.Error()}
	case err != nil:
		return &Error{Status: http.StatusBadRequest, Code: CodeQueryRefused, Field: "sql", Message: err.Error()}
	}
	return writeAnswer(w, a)
}

// writeAnswer answers a with 200: its rows are written as they are (each
// already one JSON array, as QueryFunc returns them), not encoded again,
// so the answer is held once. An error is the header's encoding, before
// anything is written.
func writeAnswer(w http.ResponseWriter, a QueryAnswer) error {
	head, err := json.MarshalIndent(struct {
		Snapshot string   `json:"snapshot"`
		Cut      QueryCut `json:"cut"`
		Columns  []string `json:"columns"`
		Types    []string `json:"types"`
	}{a.Snapshot, a.Cut, a.Columns, a.Types}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// The client going away is nothing to answer: errors stick in b.
	b := bufio.NewWriterSize(w, 64<<10)
	b.Write(bytes.TrimSuffix(head, []byte("\n}")))
	b.WriteString(",\n  \"rows\": [")
	for i, r := range a.Rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(r) // a large row goes to w as it is, not copied
	}
	fmt.Fprintf(b, "\n  ],\n  \"truncated\": %t\n}\n", a.Truncated)
	_ = b.Flush()
	return nil
}
