package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/dbtrail/dbtrail/jobs"
)

// Error codes of the "code" member of an error answer.
const (
	CodeBadRequest       = "bad_request"
	CodeUnknownField     = "unknown_field"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeLabelTaken       = "label_taken"
	CodeJobRunning       = "job_running"
	CodeJobClosed        = "job_not_running"
	CodeTooLarge         = "body_too_large"
	CodeMediaType        = "unsupported_media_type"
	CodeWrongHost        = "wrong_host"
	CodeCrossSite        = "cross_site"
	CodeRateLimited      = "rate_limited"
	CodeNotConfigured    = "not_configured"
	CodeTimeout          = "timeout"
	CodeQueryRefused     = "query_refused"
	CodeBackend          = "backend_error"
	CodeInternal         = "internal"
)

// Error is an error answer: its HTTP status and the JSON body
// {"error": {"code", "message", "field", "job_id"}}. Handlers return it;
// any other error is answered as 500 internal with a fixed message (the
// error itself goes to the log only).
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field names the request member (body field or query parameter) at
	// fault, when one is.
	Field string `json:"field,omitempty"`
	// JobID names the existing job of a conflict.
	JobID string `json:"job_id,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// badField is a 400 on field.
func badField(field string, err error) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: err.Error(), Field: field}
}

// badFieldf is a 400 on field with a formatted message.
func badFieldf(field, format string, args ...any) *Error {
	return badField(field, fmt.Errorf(format, args...))
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away: nothing to answer
}

// writeError answers err: an *Error as it is, a jobs refusal as its
// conflict or not-found answer, a timeout as 504, anything else as 500
// (logged with its text; the answer does not carry it).
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := asError(err)
	if e.Status >= 500 {
		log.Error("request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", e.Status), slog.String("error", err.Error()))
	}
	writeJSON(w, e.Status, map[string]*Error{"error": e})
}

// asError maps err to its answer.
func asError(err error) *Error {
	var e *Error
	var conflict *jobs.ConflictError
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &conflict) && conflict.Reason == jobs.ConflictLabel:
		return &Error{Status: http.StatusConflict, Code: CodeLabelTaken, Message: conflict.Error(), Field: "label", JobID: conflict.JobID}
	case errors.As(err, &conflict):
		return &Error{Status: http.StatusConflict, Code: CodeJobRunning, Message: conflict.Error(), JobID: conflict.JobID}
	case errors.Is(err, jobs.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: err.Error()}
	case errors.Is(err, jobs.ErrClosed):
		return &Error{Status: http.StatusConflict, Code: CodeJobClosed, Message: err.Error()}
	case errors.Is(err, jobs.ErrBadToken):
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: err.Error(), Field: "page_token"}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusGatewayTimeout, Code: CodeTimeout, Message: "the request took too long"}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error (see the server's log)"}
}
