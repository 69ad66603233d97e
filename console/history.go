package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/dbtrail/dbtrail/api"
)

// historyView is a row's history as the moment page shows it.
type historyView struct {
	History api.History
	// Versions are the versions with their columns, the changed ones
	// marked.
	Versions []versionView
	// Error is the API's refusal (an unknown table, a bad key, no index).
	Error *api.Error
}

// versionView is one version: its event and its row's columns.
type versionView struct {
	api.RowVersion
	Columns []columnView
}

// columnView is one column of a version's row image: the after image's
// value (the before image's for a delete), Changed when the update changed
// it (every column of an insert or a delete is "changed").
type columnView struct {
	Name, Value string
	Before      string
	Changed     bool
}

// rowHistory asks GET /v1/history for table's row key and returns it for
// the page; a refusal of the API (4xx, 501) is shown on the page.
func (c *Console) rowHistory(r *http.Request, s *session, source, table, key string) (*historyView, error) {
	var v historyView
	err := c.call(r, s, "GET", "/v1/history", url.Values{"source": {source}, "table": {table}, "key": {key}}, nil, &v.History)
	var refused *api.Error
	if errors.As(err, &refused) && (refused.Status < 500 || refused.Code == api.CodeNotConfigured) {
		v.Error = refused
		return &v, nil
	}
	if err != nil {
		return nil, err
	}
	for _, ver := range v.History.Versions {
		cols, err := versionColumns(ver)
		if err != nil {
			return nil, fmt.Errorf("console: version seq %d of %s key %s: %w", ver.Seq, table, key, err)
		}
		v.Versions = append(v.Versions, versionView{RowVersion: ver, Columns: cols})
	}
	return &v, nil
}

// versionColumns is the columns of a version in the after image's order.
func versionColumns(v api.RowVersion) ([]columnView, error) {
	before, err := objectFields(v.Before)
	if err != nil {
		return nil, err
	}
	after, err := objectFields(v.After)
	if err != nil {
		return nil, err
	}
	shown := after
	if len(after) == 0 {
		shown = before
	}
	old := map[string]string{}
	for _, f := range before {
		old[f.Name] = f.Value
	}
	out := make([]columnView, 0, len(shown))
	for _, f := range shown {
		b, had := old[f.Name]
		out = append(out, columnView{Name: f.Name, Value: f.Value, Before: b, Changed: len(before) == 0 || len(after) == 0 || !had || b != f.Value})
	}
	return out, nil
}

// field is one member of a JSON object: its name and its value as
// compact JSON text.
type field struct{ Name, Value string }

// objectFields is the members of the JSON object raw in their order (none
// for an absent image).
func objectFields(raw json.RawMessage) ([]field, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("a row image is not a JSON object")
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		text, err := jsonText(v)
		if err != nil {
			return nil, err
		}
		out = append(out, field{Name: name, Value: text})
	}
	return out, nil
}

// jsonText is the JSON value raw as compact text for a person: numbers
// exactly as written, strings without the \u escapes of <, > and & (the
// page escapes them where it writes them).
func jsonText(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimRight(b.Bytes(), "\n")), nil
}
