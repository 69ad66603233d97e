package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/dbtrail/dbtrail/api"
)

// recorder is the answer of an in-process API call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// call asks the API (its own handler, in this process) method path with
// query and the JSON of body (nil: none) as the session's token, and
// decodes the answer into out (nil: not decoded). An error answer is
// returned as the *api.Error the API answered. from is the browser's
// request: its context and remote address go with the call.
func (c *Console) call(from *http.Request, s *session, method, path string, query url.Values, body, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("console: encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	u := path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(from.Context(), method, u, rd)
	if err != nil {
		return fmt.Errorf("console: %s %s: %w", method, path, err)
	}
	req.Host = c.addr
	req.RemoteAddr = from.RemoteAddr
	if s.secret != "" {
		req.Header.Set("Authorization", "Bearer "+s.secret)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}}
	c.api.ServeHTTP(rec, req)
	if rec.status >= 400 {
		var e struct {
			Error *api.Error `json:"error"`
		}
		if err := json.Unmarshal(rec.body.Bytes(), &e); err != nil || e.Error == nil {
			return fmt.Errorf("console: %s %s: status %d without an error answer", method, path, rec.status)
		}
		e.Error.Status = rec.status
		return e.Error
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return fmt.Errorf("console: decode the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// notConfigured reports whether err is the API's 501 not_configured (a
// part of the server that is off, such as the index).
func notConfigured(err error) bool {
	e, ok := err.(*api.Error)
	return ok && e.Code == api.CodeNotConfigured
}
