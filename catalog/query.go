package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/shell"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/internal/when"
)

// Sandbox is what the API's queries read: the backup folder and, for the
// live tail, the index.
type Sandbox struct {
	BackupDir   string
	MemoryLimit string
	// MaxBytes bounds an answer's rows, encoded (--query-max-bytes; 0:
	// api.DefaultQueryMaxBytes).
	MaxBytes int64
	// Index is the index the tail reads; nil: the snapshot alone.
	Index moment.Store
	// MaxEvents is the tail's bound (tail.Reader.MaxEvents).
	MaxEvents int64
	// TailCache, when set, keeps the tails' staged windows between
	// questions (tail.Reader.Cache).
	TailCache *tail.Cache
	// Archive opens the archive location the tail reads the hours the
	// index dropped from (nil: none; such a tail is left out, with the
	// reason).
	Archive func(ctx context.Context) (storage.Store, error)
	// Slots bounds the sessions open at once (memory), shared in dev with
	// the SQL port (nil: api.DefaultMaxQueries of its own).
	Slots *api.QuerySlots
	Log   *slog.Logger
}

// SandboxQuery answers the API's questions: a sandboxed views session
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
// holding its slot (sb.Slots) until then.
func SandboxQuery(sb Sandbox) api.QueryFunc {
	slots := sb.Slots
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
			if errors.Is(err, views.ErrInterrupted) && sb.Log != nil {
				sb.Log.Info("query interrupted at its time limit", "source", q.Source, "error", err)
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

// answer answers q: its rows while they fit sb.MaxBytes encoded (else an
// *api.AnswerTooLarge), at most q.MaxRows of them (then Truncated).
func (sb Sandbox) answer(ctx context.Context, q api.Question) (api.QueryAnswer, error) {
	o := views.SessionOptions{
		Options:     views.Options{SourceDir: filepath.Join(sb.BackupDir, q.Source), Snapshot: q.Snapshot},
		MemoryLimit: sb.MemoryLimit, Threads: 1, Sandbox: true,
	}
	var st *tail.State
	var err error
	var at when.At
	if q.At != "" {
		if sb.Index == nil {
			return api.QueryAnswer{}, &api.Error{Status: http.StatusBadRequest, Code: api.CodeBadRequest, Field: "at",
				Message: "at: the server reads no index (--index-dsn): it answers the snapshots alone (?snapshot=ID)"}
		}
		if at, err = when.Parse(q.At); err != nil {
			return api.QueryAnswer{}, &api.Error{Status: http.StatusBadRequest, Code: api.CodeBadRequest, Field: "at", Message: "at: " + err.Error()}
		}
		if at.Kind == when.KindLatest {
			at = when.At{}
		}
	}
	switch {
	case q.Tail != nil && *q.Tail && sb.Index == nil:
		return api.QueryAnswer{}, errors.New("tail=true: the server reads no index (--index-dsn): only tail=false, the snapshot alone")
	case q.Snapshot == "" && sb.Index != nil && (q.Tail == nil || *q.Tail):
		past := moment.Past{Source: q.Source, Index: sb.Index, SourceDir: o.SourceDir, Log: sb.Log}
		if sb.Archive != nil {
			if past.Archive, err = sb.Archive(ctx); err != nil {
				return api.QueryAnswer{}, err
			}
		}
		r := &tail.Reader{Past: past, MaxEvents: sb.MaxEvents, MemoryLimit: sb.MemoryLimit, Log: sb.Log, At: at, Cache: sb.TailCache}
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
	r, err := shell.NewResult(rows)
	if err != nil {
		return api.QueryAnswer{}, err
	}
	a := api.QueryAnswer{Snapshot: s.Snapshot(), Columns: r.Cols, Types: r.Types, Rows: []json.RawMessage{}}
	if a.Cut, err = answerCut(st, o.SourceDir, s.Snapshot()); err != nil {
		return api.QueryAnswer{}, err
	}
	maxBytes := sb.MaxBytes
	if maxBytes <= 0 {
		maxBytes = api.DefaultQueryMaxBytes
	}
	var size int64
	vals := make([]any, len(r.Cols))
	for {
		ok, err := r.Next(vals)
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
			b = shell.AppendJSON(b, v, r.Types[i])
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
	return api.QueryCut{Seq: p.Seq, GTID: p.GTID, Binlog: p.String(), Text: shell.SnapshotCutLine(id, p)}, nil
}
