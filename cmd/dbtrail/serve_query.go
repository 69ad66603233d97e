package main

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/views"
)

// maxQueries bounds the API's DuckDB sessions open at once (memory).
const maxQueries = 2

// sandboxQuery answers the API's questions: a sandboxed views session
// (views.SessionOptions.Sandbox: files of the source's backup folder only,
// no network, no extension, read-only statements) of the source's snapshot,
// its rows as JSON arrays as `dbtrail query --format json` writes values.
func sandboxQuery(backupDir, memoryLimit string) api.QueryFunc {
	slots := make(chan struct{}, maxQueries)
	return func(ctx context.Context, q api.Question) (api.QueryAnswer, error) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return api.QueryAnswer{}, ctx.Err()
		}
		s, err := views.OpenSession(ctx, views.SessionOptions{
			Options:     views.Options{SourceDir: filepath.Join(backupDir, q.Source), Snapshot: q.Snapshot},
			MemoryLimit: memoryLimit, Threads: 1, Sandbox: true,
		})
		if err != nil {
			return api.QueryAnswer{}, err
		}
		defer s.Close()
		rows, _, err := s.Query(ctx, q.SQL)
		if err != nil {
			return api.QueryAnswer{}, err
		}
		defer rows.Close()
		r, err := newResult(rows)
		if err != nil {
			return api.QueryAnswer{}, err
		}
		a := api.QueryAnswer{Snapshot: s.Snapshot(), Columns: r.cols, Types: r.types, Rows: []json.RawMessage{}}
		vals := make([]any, len(r.cols))
		for {
			ok, err := r.next(vals)
			if err != nil {
				return api.QueryAnswer{}, err
			}
			if !ok {
				break
			}
			if len(a.Rows) == q.MaxRows {
				a.Truncated = true
				break
			}
			b := []byte{'['}
			for i, v := range vals {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSON(b, v, r.types[i])
			}
			a.Rows = append(a.Rows, append(b, ']'))
		}
		return a, rows.Close()
	}
}
