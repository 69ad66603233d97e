package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dbtrail/dbtrail/api"
)

// queryResult is an answer of POST /v1/query with its cells as text.
type queryResult struct {
	Answer api.QueryAnswer
	Cells  [][]cell
}

// cell is one value: its text, or NULL.
type cell struct {
	Text string
	Null bool
}

// ask posts q to /v1/query with params and returns its answer with the
// rows' values as text (numbers as the API wrote them, exactly).
func (c *Console) ask(r *http.Request, s *session, q api.QueryRequest, params url.Values) (queryResult, error) {
	var res queryResult
	if err := c.call(r, s, "POST", "/v1/query", params, q, &res.Answer); err != nil {
		return res, err
	}
	for i, raw := range res.Answer.Rows {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var vals []any
		if err := dec.Decode(&vals); err != nil {
			return res, fmt.Errorf("console: row %d of the query's answer: %w", i+1, err)
		}
		row := make([]cell, len(vals))
		for k, v := range vals {
			switch x := v.(type) {
			case nil:
				row[k] = cell{Text: "NULL", Null: true}
			case string:
				row[k] = cell{Text: x}
			case json.Number, bool:
				row[k] = cell{Text: fmt.Sprint(x)}
			default:
				b, _ := json.Marshal(x) // a value decoded from JSON encodes again
				row[k] = cell{Text: string(b)}
			}
		}
		res.Cells = append(res.Cells, row)
	}
	return res, nil
}

// queryView is the query page: the question and its answer.
type queryView struct {
	// At is the moment asked (the API's ?at): "" for the snapshot or the
	// live tail.
	SQL, Snapshot, Tail, At string
	MaxRows                 int
	Result                  *queryResult
	// Error is the API's refusal of the question, shown above the box.
	Error *api.Error
}

// queryPage is GET /query: the SQL box.
func (c *Console) queryPage(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	c.render(w, r, http.StatusOK, "query", s, queryView{SQL: q.Get("sql"), Snapshot: q.Get("snapshot"), At: q.Get("at"), MaxRows: api.DefaultQueryRows})
	return nil
}

// query is POST /query: the question asked of the API's sandbox (its
// limits and refusals are the API's), the answer as a table with its cut.
func (c *Console) query(w http.ResponseWriter, r *http.Request, s *session) error {
	v := queryView{SQL: r.PostFormValue("sql"), Snapshot: strings.TrimSpace(r.PostFormValue("snapshot")), Tail: r.PostFormValue("tail"),
		At: strings.TrimSpace(r.PostFormValue("at")), MaxRows: api.DefaultQueryRows}
	if n, err := strconv.Atoi(r.PostFormValue("max_rows")); err == nil {
		v.MaxRows = n
	}
	params := url.Values{}
	if v.Snapshot != "" {
		params.Set("snapshot", v.Snapshot)
	}
	if v.Tail == "false" {
		params.Set("tail", "false")
	}
	if v.At != "" {
		params.Set("at", v.At)
	}
	res, err := c.ask(r, s, api.QueryRequest{SQL: v.SQL, Source: c.sourceOf(r), MaxRows: v.MaxRows}, params)
	var refused *api.Error
	if errors.As(err, &refused) && refused.Status < 500 {
		v.Error = refused
		c.render(w, r, refused.Status, "query", s, v)
		return nil
	}
	if err != nil {
		return err
	}
	v.Result = &res
	c.render(w, r, http.StatusOK, "query", s, v)
	return nil
}

// prettyValue is v as indented JSON.
func prettyValue(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }
