package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// sandbox is what the API's queries read: the backup folder and, for the
// live tail, the index.
type sandbox struct {
	backupDir   string
	memoryLimit string
	// maxBytes bounds an answer's rows, encoded (--query-max-bytes; 0:
	// DefaultQueryMaxBytes).
	maxBytes int64
	// index is the index the tail reads; nil: the snapshot alone.
	index moment.Store
	// maxEvents is the tail's bound (tail.Reader.MaxEvents).
	maxEvents int64
	// archive opens the archive location the tail reads the hours the
	// index dropped from (nil: none; such a tail is left out, with the
	// reason).
	archive func(ctx context.Context) (storage.Store, error)
	// slots bounds the sessions open at once (memory), shared in dev with
	// the SQL port (nil: api.DefaultMaxQueries of its own).
	slots *api.QuerySlots
	log   *slog.Logger
}

// archiveOnce opens the store of url at its first use and keeps it (a
// failed open is tried again at the next use); nil for "".
func archiveOnce(url string, log *slog.Logger) func(ctx context.Context) (storage.Store, error) {
	if url == "" {
		return nil
	}
	var mu sync.Mutex
	var open storage.Store
	return func(ctx context.Context) (storage.Store, error) {
		mu.Lock()
		defer mu.Unlock()
		if open != nil {
			return open, nil
		}
		s, err := openArchive(ctx, url, log)
		if err != nil {
			return nil, err
		}
		open = s
		return s, nil
	}
}

// DefaultQueryMaxBytes is --query-max-bytes' default: the largest answer,
// its rows encoded, one API query holds.
const DefaultQueryMaxBytes = api.DefaultQueryMaxBytes

// sandboxQuery answers the API's questions: a sandboxed views session
// (views.SessionOptions.Sandbox: files of the source's backup folder and
// the session's staged tail only, no network, no extension, read-only
// statements) of the source's current snapshot plus the changes after it
// (the live tail of `dbtrail query`, docs/tail.md, when sb has an index and
// the question does not turn it off), or of its snapshot; its rows as JSON
// arrays as `dbtrail query --format json` writes values, and its cut.
//
// The statement is checked (views.CheckStatement) before the session opens
// or the index is read. It answers at ctx's end at the latest: the work
// goes on in the background until DuckDB stops at its interrupt (a
// function DuckDB cannot interrupt, folding a constant, finishes first),
// holding its slot (sb.slots) until then.
func sandboxQuery(sb sandbox) api.QueryFunc {
	slots := sb.slots
	if slots == nil {
		slots = api.NewQuerySlots(api.DefaultMaxQueries)
	}
	return func(ctx context.Context, q api.Question) (api.QueryAnswer, error) {
		if err := views.CheckStatement(ctx, q.SQL); err != nil {
			return api.QueryAnswer{}, err
		}
		if err := slots.Acquire(ctx); err != nil {
			return api.QueryAnswer{}, err
		}
		type answer struct {
			a   api.QueryAnswer
			err error
		}
		done := make(chan answer, 1)
		go func() {
			defer slots.Release()
			a, err := sb.answer(ctx, q)
			if errors.Is(err, views.ErrInterrupted) && sb.log != nil {
				sb.log.Info("query interrupted at its time limit", "source", q.Source, "error", err)
			}
			done <- answer{a, err}
		}()
		select {
		case r := <-done:
			return r.a, r.err
		case <-ctx.Done():
			return api.QueryAnswer{}, ctx.Err()
		}
	}
}

// answer answers q: its rows while they fit sb.maxBytes encoded (else an
// *api.AnswerTooLarge), at most q.MaxRows of them (then Truncated).
func (sb sandbox) answer(ctx context.Context, q api.Question) (api.QueryAnswer, error) {
	o := views.SessionOptions{
		Options:     views.Options{SourceDir: filepath.Join(sb.backupDir, q.Source), Snapshot: q.Snapshot},
		MemoryLimit: sb.memoryLimit, Threads: 1, Sandbox: true,
	}
	var st *tail.State
	var err error
	switch {
	case q.Tail != nil && *q.Tail && sb.index == nil:
		return api.QueryAnswer{}, errors.New("tail=true: the server reads no index (--index-dsn): only tail=false, the snapshot alone")
	case q.Snapshot == "" && sb.index != nil && (q.Tail == nil || *q.Tail):
		past := moment.Past{Source: q.Source, Index: sb.index, SourceDir: o.SourceDir, Log: sb.log}
		if sb.archive != nil {
			if past.Archive, err = sb.archive(ctx); err != nil {
				return api.QueryAnswer{}, err
			}
		}
		r := &tail.Reader{Past: past, MaxEvents: sb.maxEvents, MemoryLimit: sb.memoryLimit, Log: sb.log}
		o.Tail = r.ViewsTail(func(prepared *tail.State) { st = prepared })
	}
	s, err := views.OpenSession(ctx, o)
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
	if a.Cut, err = answerCut(st, o.SourceDir, s.Snapshot()); err != nil {
		return api.QueryAnswer{}, err
	}
	maxBytes := sb.maxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultQueryMaxBytes
	}
	var size int64
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
		b = append(b, ']')
		if size += int64(len(b)) + 1; size > maxBytes {
			return api.QueryAnswer{}, &api.AnswerTooLarge{Cap: maxBytes}
		}
		a.Rows = append(a.Rows, b)
	}
	return a, rows.Close()
}

// answerCut is the cut of an answer: the tail's st, or (st nil: no tail
// asked for) the position of snapshot id in sourceDir.
func answerCut(st *tail.State, sourceDir, id string) (api.QueryCut, error) {
	if st != nil && st.Live && st.Events > 0 {
		c := st.Cut
		t := c.Txn.CommitTime.UTC()
		return api.QueryCut{Tail: true, Seq: c.Seq, GTID: c.Txn.Position.GTID, Binlog: c.Txn.Position.String(), Committed: &t,
			Events: st.Events, Tables: st.Tables, Text: st.String()}, nil
	}
	if st != nil {
		// No change after the snapshot (the tail answers at the snapshot's
		// position), or a fallback with its reason.
		p := st.Position
		return api.QueryCut{Tail: st.Live, Seq: p.Seq, GTID: p.GTID, Binlog: p.String(), Reason: st.Reason, Text: st.String()}, nil
	}
	snap, err := snapshot.OpenSnapshot(snapshot.Folder(sourceDir).Snapshot(id))
	if err != nil {
		return api.QueryCut{}, fmt.Errorf("the cut of the answer: %w", err)
	}
	p := snap.Manifest.Position
	return api.QueryCut{Seq: p.Seq, GTID: p.GTID, Binlog: p.String(), Text: snapshotCutLine(id, p)}, nil
}

// sandbox is what the API's queries read: backupDir and, when store is
// not nil, the index for the live tail (bounded by --query-tail-max-events).
func (s *serveConfig) sandbox(backupDir string, store *index.Store, log *slog.Logger) sandbox {
	sb := sandbox{backupDir: backupDir, memoryLimit: s.queryMemoryLimit, maxBytes: s.queryMaxBytes, maxEvents: s.queryTailMaxEvents,
		archive: archiveOnce(s.archiveURL, log), slots: s.querySlots(), log: log}
	if store != nil {
		sb.index = store
	}
	return sb
}

// querySlots is the bound of the queries answered at once, one for the API
// and, in dev, the SQL port (api.DefaultMaxQueries).
func (s *serveConfig) querySlots() *api.QuerySlots {
	if s.slots == nil {
		s.slots = api.NewQuerySlots(api.DefaultMaxQueries)
	}
	return s.slots
}
