package e2e

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// gate holds something back until released: entered is closed when it is
// reached, release lets it go.
type gate struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}), release: make(chan struct{})} }

// wait marks the gate reached and blocks until released or ctx is done,
// calling tick every second meanwhile.
func (g *gate) wait(ctx context.Context, tick func()) {
	g.once.Do(func() { close(g.entered) })
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-g.release:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			tick()
		}
	}
}

// gatedStore is a store whose Open of one object waits at a gate.
type gatedStore struct {
	storage.Store
	object string
	g      *gate
}

func (s *gatedStore) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == s.object {
		s.g.wait(ctx, func() {})
	}
	return s.Store.Open(ctx, name)
}

// stepGate holds the nth execution of an activity type at a gate before it
// runs, heartbeating meanwhile.
type stepGate struct {
	interceptor.WorkerInterceptorBase
	activity string
	n        int
	g        *gate
	mu       sync.Mutex
	seen     int
}

func (s *stepGate) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &stepGateActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, s: s}
}

type stepGateActivity struct {
	interceptor.ActivityInboundInterceptorBase
	s *stepGate
}

func (a *stepGateActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if activity.GetInfo(ctx).ActivityType.Name == a.s.activity {
		a.s.mu.Lock()
		a.s.seen++
		hold := a.s.seen == a.s.n
		a.s.mu.Unlock()
		if hold {
			a.s.g.wait(ctx, func() { activity.RecordHeartbeat(ctx) })
		}
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// TestReindexExcludesCapture: while reindex runs, its steps
// hold the source's capture lease; a capture started meanwhile waits for
// the lease, takes it between two steps and is refused, naming the
// restore and its start time; the restore ends with the index holding
// exactly the archived events; a capture started after it resumes there.
func TestReindexExcludesCapture(t *testing.T) {
	e := newArchiveEnv(t)
	base := time.Now().UTC().Truncate(time.Hour).Add(-40 * time.Hour)
	w := newWorkload(23)
	orig, lastArchived := archivedTraffic(t, e, w, base)
	var objects []string
	must(t, e.remote.List(e.ctx, archive.ArchivesPrefix("main"), func(info storage.Info) error {
		objects = append(objects, info.Name)
		return nil
	}))
	if len(objects) != 8 {
		t.Fatalf("archive objects %v", objects)
	}

	// The third hour's download waits at inHour (the step holds the
	// lease); the fourth hour's step waits at between before it runs
	// (nobody holds the lease).
	storeB := e.otherIndex(t)
	inHour, between := newGate(), newGate()
	const queue = "restore-lease"
	work := filepath.Join(e.dir, queue)
	acts := &activities.Activities{Sources: e.acts.Sources, Index: storeB, BackupDir: e.acts.BackupDir, WorkDir: work,
		Engines: activities.NewEnginePool(work, ""), Remote: &gatedStore{Store: e.remote, object: objects[2], g: inHour}}
	t.Cleanup(func() { acts.Engines.Close() })
	opts := workers.Options()
	opts.Interceptors = append(opts.Interceptors, &stepGate{activity: calls.ReindexHour, n: 4, g: between})
	wk := worker.New(e.c, queue, opts)
	workers.RegisterAll(wk, acts)
	must(t, wk.Start())
	t.Cleanup(wk.Stop)
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.ReindexWorkflowID("main"), TaskQueue: queue},
		workflows.Reindex, payload.ReindexInput{Source: "main"})
	must(t, err)
	restoreDone := make(chan error, 1)
	var res workflows.ReindexResult
	go func() { restoreDone <- run.Get(e.ctx, &res) }()

	waitGate(t, inHour, restoreDone)
	if _, err := storeB.TryLease(e.ctx, "main", 0); !errors.Is(err, index.ErrLeaseHeld) {
		t.Fatalf("the lease while a restore step runs: %v", err)
	}
	rs, found, err := storeB.ReindexStatus(e.ctx, "main")
	must(t, err)
	if !found || !rs.FinishedAt.IsZero() {
		t.Fatalf("restore record while it runs: %+v %v", rs, found)
	}
	refused := e.runCapture(t, storeB)
	close(inHour.release)
	waitGate(t, between, restoreDone)
	select {
	case err := <-refused:
		var ue *index.UnfinishedReindexError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "begun at "+rs.StartedAt.UTC().Format(time.RFC3339)) {
			t.Fatalf("capture during the restore: %v", err)
		}
		t.Logf("capture during the restore refused: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("capture during the restore was not refused")
	}
	if _, ok, err := storeB.LoadCheckpoint(e.ctx, "main"); err != nil || ok {
		t.Fatalf("checkpoint during the restore: %v %v", ok, err)
	}
	close(between.release)
	if err := <-restoreDone; err != nil {
		t.Fatalf("Reindex: %v", err)
	}
	if res.Hours != 8 || res.LastSeq != lastArchived || len(res.Gaps) != 0 {
		t.Fatalf("restore result %+v (last archived seq %d)", res, lastArchived)
	}

	// The index holds exactly the archived events.
	restored := indexEvents(t, e.ctx, storeB, "main")
	stored, _ := storedEvents(t, e.ctx, e.remote, "main")
	if len(restored) != len(stored) || int64(len(stored)) != res.Events {
		t.Fatalf("%d events restored, %d archived, result says %d", len(restored), len(stored), res.Events)
	}
	for _, ev := range stored {
		if d := eventDiff(restored[ev.Seq], ev); d != "" {
			t.Fatalf("restored seq %d differs from the archive: %s", ev.Seq, d)
		}
		if d := eventDiff(ev, orig[ev.Seq]); d != "" {
			t.Fatalf("archived seq %d differs from the captured event: %s", ev.Seq, d)
		}
	}

	// After the restore capture starts and resumes where it ended.
	capDone := e.captureAfterRestore(t, w, storeB, 3)
	select {
	case err := <-capDone:
		t.Fatalf("capture after the restore stopped: %v", err)
	default:
	}
}

// waitGate waits until g is reached, failing when the restore ends first.
func waitGate(t *testing.T, g *gate, restoreDone <-chan error) {
	t.Helper()
	select {
	case <-g.entered:
	case err := <-restoreDone:
		t.Fatalf("restore ended before its gate: %v", err)
	case <-time.After(5 * time.Minute):
		t.Fatal("restore did not reach its gate")
	}
}
