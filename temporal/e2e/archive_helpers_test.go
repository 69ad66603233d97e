package e2e

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// archiveEnv is a backupEnv whose worker archives to an S3 bucket on a
// real versitygw.
type archiveEnv struct {
	*backupEnv
	s3     *testsuite.S3Server
	url    string
	remote storage.Store
}

// newArchiveEnv starts the servers, S3 and capture; the source's pool is
// one connection, so a session's SET TIMESTAMP stamps every statement that
// follows (see stampHour).
func newArchiveEnv(t *testing.T, opts ...envOption) *archiveEnv {
	t.Helper()
	return newArchiveEnvOn(t, testsuite.S3Options{}, opts...)
}

// newArchiveEnvOn is newArchiveEnv with an S3 server started with s3opts
// (e.g. a bucket with Object Lock).
func newArchiveEnvOn(t *testing.T, s3opts testsuite.S3Options, opts ...envOption) *archiveEnv {
	t.Helper()
	e := &archiveEnv{backupEnv: newBackupEnv(t, opts...)}
	e.src.SetMaxOpenConns(1)
	e.src.SetMaxIdleConns(1)
	e.src.SetConnMaxLifetime(0)
	e.s3 = testsuite.StartS3With(t, s3opts)
	e.url = e.s3.URL("arch")
	var err error
	e.remote, err = storage.Open(e.ctx, e.url, storage.Options{})
	must(t, err)
	e.acts.Remote = e.remote
	return e
}

// stampHour makes the source's statements commit at hour plus sec seconds
// (SET TIMESTAMP): capture stamps their events in that past hour. A zero
// hour goes back to the clock.
func (e *archiveEnv) stampHour(t *testing.T, hour time.Time, sec int) {
	t.Helper()
	if hour.IsZero() {
		_, err := e.src.ExecContext(e.ctx, "SET TIMESTAMP = DEFAULT")
		must(t, err)
		return
	}
	_, err := e.src.ExecContext(e.ctx, "SET TIMESTAMP = ?", hour.Unix()+int64(sec))
	must(t, err)
}

// pastTraffic runs steps of the workload, each stamped a few seconds
// further into hour.
func (e *archiveEnv) pastTraffic(t *testing.T, w *workload, hour time.Time, steps int) {
	t.Helper()
	for i := range steps {
		e.stampHour(t, hour, 1+i*3000/max(steps, 1))
		w.step(t, e.backupEnv, 4)
	}
	e.stampHour(t, time.Time{}, 0)
}

// runArchive runs one Archive to its end.
func (e *archiveEnv) runArchive(t *testing.T, indexHours int) workflows.ArchiveResult {
	t.Helper()
	return e.runArchiveOn(t, payload.TaskQueue, indexHours)
}

// runArchiveOn runs one Archive on queue to its end.
func (e *archiveEnv) runArchiveOn(t *testing.T, queue string, indexHours int) workflows.ArchiveResult {
	t.Helper()
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.ArchiveWorkflowID("main"), TaskQueue: queue},
		workflows.Archive, payload.ArchiveInput{Source: "main", IndexHours: indexHours})
	must(t, err)
	var res workflows.ArchiveResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("Archive: %v", err)
	}
	return res
}

// indexEvents returns every event of source in store, by seq.
func indexEvents(t *testing.T, ctx context.Context, store *index.Store, source string) map[uint64]change.Event {
	t.Helper()
	hours, err := store.HoursBefore(ctx, source, math.MaxUint32)
	must(t, err)
	out := map[uint64]change.Event{}
	for _, h := range hours {
		must(t, store.HourEvents(ctx, source, h.Hour, func(e change.Event) error {
			if _, dup := out[e.Seq]; dup {
				return fmt.Errorf("seq %d twice in the index", e.Seq)
			}
			out[e.Seq] = e
			return nil
		}))
	}
	return out
}

// storedEvents returns the events of every archive file of source in st,
// and the files' hours.
func storedEvents(t *testing.T, ctx context.Context, st storage.Store, source string) ([]change.Event, []time.Time) {
	t.Helper()
	var evs []change.Event
	var hours []time.Time
	must(t, st.List(ctx, archive.ArchivesPrefix(source), func(info storage.Info) error {
		h, ok := archive.ParseObjectName(source, info.Name)
		if !ok {
			return fmt.Errorf("unexpected object %s", info.Name)
		}
		hours = append(hours, h)
		ra, err := st.OpenReaderAt(ctx, info.Name)
		if err != nil {
			return err
		}
		defer ra.Close()
		r, err := archive.NewReader(ra, ra.Size(), info.Name)
		if err != nil {
			return err
		}
		if err := r.Verify(); err != nil {
			return err
		}
		return r.Events(func(e change.Event) error {
			if change.HourID(e.CommitTime) != change.HourID(h) {
				return fmt.Errorf("%s holds seq %d of %s", info.Name, e.Seq, e.CommitTime)
			}
			evs = append(evs, e)
			return nil
		})
	}))
	return evs, hours
}

// checkEveryEventOnce requires the events of parts, together, to be want:
// every seq exactly once, every field and image byte-equal; it returns them
// in seq order.
func checkEveryEventOnce(t *testing.T, want map[uint64]change.Event, parts ...[]change.Event) []change.Event {
	t.Helper()
	var all []change.Event
	for _, p := range parts {
		all = append(all, p...)
	}
	slices.SortFunc(all, func(a, b change.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	for i := range all {
		if i > 0 && all[i].Seq == all[i-1].Seq {
			t.Fatalf("seq %d twice", all[i].Seq)
		}
		w, ok := want[all[i].Seq]
		if !ok {
			t.Fatalf("seq %d was never captured", all[i].Seq)
		}
		if d := eventDiff(all[i], w); d != "" {
			t.Fatalf("seq %d: %s", w.Seq, d)
		}
	}
	if len(all) != len(want) {
		t.Fatalf("%d events, %d captured", len(all), len(want))
	}
	return all
}

// eventDiff names the first difference between two events, "" for none.
func eventDiff(g, w change.Event) string {
	switch {
	case g.Seq != w.Seq || !g.CommitTime.Equal(w.CommitTime):
		return fmt.Sprintf("seq/commit time %d %s, want %d %s", g.Seq, g.CommitTime, w.Seq, w.CommitTime)
	case g.BinlogFile != w.BinlogFile || g.EndPos != w.EndPos || g.GTID != w.GTID:
		return fmt.Sprintf("position %s:%d %s, want %s:%d %s", g.BinlogFile, g.EndPos, g.GTID, w.BinlogFile, w.EndPos, w.GTID)
	case g.Schema != w.Schema || g.Table != w.Table || g.SchemaVersion != w.SchemaVersion || g.Op != w.Op:
		return fmt.Sprintf("table/op %s.%s v%d %c, want %s.%s v%d %c", g.Schema, g.Table, g.SchemaVersion, g.Op, w.Schema, w.Table, w.SchemaVersion, w.Op)
	case g.PK != w.PK || g.PKBefore != w.PKBefore:
		return fmt.Sprintf("key %s/%s, want %s/%s", g.PK, g.PKBefore, w.PK, w.PKBefore)
	case !bytes.Equal(g.Before, w.Before) || (g.Before == nil) != (w.Before == nil):
		return fmt.Sprintf("before image %q, want %q", g.Before, w.Before)
	case !bytes.Equal(g.After, w.After) || (g.After == nil) != (w.After == nil):
		return fmt.Sprintf("after image %q, want %q", g.After, w.After)
	}
	return ""
}

func values[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
