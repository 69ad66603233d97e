package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

const otherQueue = "dbtrail/worker/b"

// spreadPlan is a plan of n pair tables, then a link and a pair that uses
// a compacted range (both only for the stager).
func spreadPlan(n int) foldplan.Plan {
	p := foldplan.Plan{Cut: 50}
	for i := range n {
		p.Tables = append(p.Tables, foldplan.TablePlan{Key: foldplan.TableKey{Schema: "app", Table: string(rune('a' + i))},
			Action: foldplan.ActionPair, Next: 3, Changes: 4})
	}
	p.Tables = append(p.Tables, foldplan.TablePlan{Key: foldplan.TableKey{Schema: "app", Table: "linked"}, Action: foldplan.ActionLink},
		foldplan.TablePlan{Key: foldplan.TableKey{Schema: "app", Table: "compacted"}, Action: foldplan.ActionPair,
			UseCompacted: &foldplan.CompactedRange{}, Next: 3, Changes: 1})
	return p
}

// tableRun is where one RefreshTable ran.
type tableRun struct {
	table, queue string
	shared       bool
}

// spreadRuns mocks the activities of a spread refresh: RefreshWorkers
// names otherQueue, RefreshTable records where each table ran (fail, when
// set, decides a run's error), AdoptTable records the tables adopted, and
// PublishRefresh the tables published. workers, when set, is
// RefreshWorkers' answer.
type spreadRuns struct {
	workers *calls.RefreshWorkersResult // nil: otherQueue
	mu      sync.Mutex
	runs    []tableRun
	adopted []string
	pub     calls.PublishRefreshInput

	otherOnce sync.Once
	otherRan  chan struct{} // closed when a table first runs on otherQueue
}

func (s *spreadRuns) mock(t *testing.T, plan foldplan.Plan, fail func(tableRun) error) *testsuite.TestWorkflowEnvironment {
	env := refreshEnv(t, plan)
	s.otherRan = make(chan struct{})
	workers := calls.RefreshWorkersResult{Self: "dbtrail/worker/a", Others: []string{otherQueue}}
	if s.workers != nil {
		workers = *s.workers
	}
	env.OnActivity(a.RefreshWorkers, mock.Anything, mock.Anything).Return(workers, nil)
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(func(ctx context.Context, in calls.RefreshTableInput) (calls.ConvertTableResult, error) {
		r := tableRun{table: in.Table.Key.Table, queue: activity.GetInfo(ctx).TaskQueue, shared: in.Shared}
		s.mu.Lock()
		s.runs = append(s.runs, r)
		s.mu.Unlock()
		if r.queue == otherQueue {
			s.otherOnce.Do(func() { close(s.otherRan) })
		}
		if fail != nil {
			if err := fail(r); err != nil {
				return calls.ConvertTableResult{}, err
			}
		}
		return calls.ConvertTableResult{Schema: "app", Table: r.table, File: "app/" + r.table + ".parquet"}, nil
	})
	env.OnActivity(a.AdoptTable, mock.Anything, mock.Anything).Return(func(ctx context.Context, in calls.AdoptTableInput) (struct{}, error) {
		if in.Result.Table != in.Table.Key.Table || in.SnapshotID != "20261129T090500Z" || in.Prev != "20261129T090000Z" {
			return struct{}{}, errors.New("adopt of the wrong result")
		}
		s.mu.Lock()
		s.adopted = append(s.adopted, in.Table.Key.Table)
		s.mu.Unlock()
		return struct{}{}, nil
	})
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishRefreshInput) (calls.PublishResult, error) {
		s.pub = in
		return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(calls.PruneResult{}, nil)
	return env
}

// runRefresh runs Refresh in env and fails on its error.
func runRefresh(t *testing.T, env *testsuite.TestWorkflowEnvironment, in payload.RefreshInput) {
	t.Helper()
	env.ExecuteWorkflow(Refresh, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

// checkPublished fails unless every table of plan was published once, in
// the plan's order.
func (s *spreadRuns) checkPublished(t *testing.T, plan foldplan.Plan) {
	t.Helper()
	if len(s.pub.Tables) != len(plan.Tables) {
		t.Fatalf("published %d tables, want %d", len(s.pub.Tables), len(plan.Tables))
	}
	for i, tp := range plan.Tables {
		if s.pub.Tables[i].Table != tp.Key.Table {
			t.Fatalf("published table %d is %s, want %s", i, s.pub.Tables[i].Table, tp.Key.Table)
		}
	}
}

// ranOn returns the tables that ran on queue, and whether each was shared.
func (s *spreadRuns) ranOn(queue string) (tables []string, allShared bool) {
	allShared = true
	for _, r := range s.runs {
		if r.queue == queue {
			tables = append(tables, r.table)
			allShared = allShared && r.shared
		}
	}
	return tables, allShared
}

func TestRefreshSpreadsTablesOverWorkersAndAdoptsThem(t *testing.T) {
	plan := spreadPlan(8)
	var s spreadRuns
	env := s.mock(t, plan, nil)
	runRefresh(t, env, payload.RefreshInput{Source: "main", TableDeltas: true, Parallel: 2})
	other, allShared := s.ranOn(otherQueue)
	if len(other) == 0 || !allShared {
		t.Fatalf("tables on the other worker: %v (all shared: %v); runs %+v", other, allShared, s.runs)
	}
	if slices.Contains(other, "linked") || slices.Contains(other, "compacted") {
		t.Fatalf("a link or a compacted table ran on the other worker: %v", other)
	}
	for _, r := range s.runs {
		if r.queue != otherQueue && r.shared {
			t.Fatalf("table %s ran on the stager as shared", r.table)
		}
	}
	if len(s.runs) != len(plan.Tables) {
		t.Fatalf("%d runs for %d tables: %+v", len(s.runs), len(plan.Tables), s.runs)
	}
	slices.Sort(other)
	slices.Sort(s.adopted)
	if !slices.Equal(other, s.adopted) {
		t.Fatalf("adopted %v, the other worker ran %v", s.adopted, other)
	}
	s.checkPublished(t, plan)
}

func TestRefreshSpreadTableOfLostWorkerRunsOnStager(t *testing.T) {
	plan := spreadPlan(6)
	var s spreadRuns
	env := s.mock(t, plan, func(r tableRun) error {
		if r.queue == otherQueue {
			return errors.New("activity Heartbeat timeout") // the worker died
		}
		return nil
	})
	runRefresh(t, env, payload.RefreshInput{Source: "main", TableDeltas: true, Parallel: 2})
	other, _ := s.ranOn(otherQueue)
	if len(other) == 0 || len(other) > 2 {
		t.Fatalf("the lost worker got %v; want its first tables only (at most Parallel)", other)
	}
	for _, lost := range other {
		var again bool
		for _, r := range s.runs {
			again = again || (r.table == lost && r.queue != otherQueue && !r.shared)
		}
		if !again {
			t.Fatalf("table %s of the lost worker did not run again on the stager: %+v", lost, s.runs)
		}
	}
	if len(s.adopted) != 0 {
		t.Fatalf("adopted %v from a lost worker", s.adopted)
	}
	s.checkPublished(t, plan)
}

func TestRefreshWithoutOtherWorkersRunsEveryTableOnStager(t *testing.T) {
	plan := spreadPlan(3)
	s := spreadRuns{workers: &calls.RefreshWorkersResult{Reason: "no other live worker"}}
	env := s.mock(t, plan, nil)
	runRefresh(t, env, payload.RefreshInput{Source: "main", TableDeltas: true})
	for _, r := range s.runs {
		if r.shared || r.queue == otherQueue {
			t.Fatalf("table %s shared without other workers", r.table)
		}
	}
	s.checkPublished(t, plan)
}

// discards mocks the cleanup of a failed refresh and returns the
// snapshots DiscardUnpublished was asked to delete from the store.
func discards(env *testsuite.TestWorkflowEnvironment) *[]string {
	var ids []string
	env.OnActivity(a.RemoveSnapshotStaging, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(a.DiscardUnpublished, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.DiscardUnpublishedInput) error {
		ids = append(ids, in.Source+"/"+in.SnapshotID)
		return nil
	})
	return &ids
}

// failOn fails, without retry, the runs of table on the stager.
func failOn(table string) func(tableRun) error {
	return func(r tableRun) error {
		if r.table == table && !r.shared {
			return temporal.NewNonRetryableApplicationError("broken", "Broken", nil)
		}
		return nil
	}
}

// failAfterOther is failOn(table) once a table has run on otherQueue: a
// table failing on the stager stops new starts and cancels the shared
// ones, so without the wait a shared run scheduled before the failure may
// be cancelled before it starts (the test env runs activities on their
// own goroutines).
func (s *spreadRuns) failAfterOther(table string) func(tableRun) error {
	fail := failOn(table)
	return func(r tableRun) error {
		if err := fail(r); err != nil {
			select {
			case <-s.otherRan:
			case <-time.After(time.Minute): // the test then fails: no table ran on the other worker
			}
			return err
		}
		return nil
	}
}

func TestRefreshSpreadFailedDeletesSharedFilesFromStore(t *testing.T) {
	var s spreadRuns
	env := s.mock(t, spreadPlan(6), s.failAfterOther("compacted"))
	ids := discards(env)
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true, Parallel: 2})
	if env.GetWorkflowError() == nil {
		t.Fatal("the refresh succeeded with a failed table")
	}
	if other, _ := s.ranOn(otherQueue); len(other) == 0 {
		t.Fatalf("no table ran on the other worker: %+v", s.runs)
	}
	if !slices.Equal(*ids, []string{"main/20261129T090500Z"}) {
		t.Fatalf("store cleanup of the failed refresh: %v, want main/20261129T090500Z once", *ids)
	}
}

func TestRefreshFailedWithoutSharedTablesLeavesStoreAlone(t *testing.T) {
	s := spreadRuns{workers: &calls.RefreshWorkersResult{Reason: "no other live worker"}}
	env := s.mock(t, spreadPlan(3), failOn("compacted"))
	ids := discards(env)
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	if env.GetWorkflowError() == nil {
		t.Fatal("the refresh succeeded with a failed table")
	}
	if len(*ids) != 0 {
		t.Fatalf("store cleanup without a shared table: %v", *ids)
	}
}

func TestPlacementPrefersStagerThenFillsOthers(t *testing.T) {
	p := newPlacement(spreadPlan(5).Tables, 3, 2) // a b c d e linked compacted; stager + 2 workers
	var got []string
	for {
		w, t, ok := p.next()
		if !ok {
			break
		}
		got = append(got, string(rune('0'+w))+":"+string(rune('0'+t)))
	}
	// stager: tables 0 and 1 from the front; worker 1: the shareable ones
	// from the end, 4 and 3; worker 2: the last shareable one, 2 (5 is a
	// link, 6 compacted).
	if want := "0:0 0:1 1:4 1:3 2:2"; strings.Join(got, " ") != want {
		t.Fatalf("placed %v, want %s", got, want)
	}
	p.lose(1, 4)
	p.done(2)
	if w, tb, ok := p.next(); !ok || w != 2 || tb != 4 {
		t.Fatalf("after worker 1 lost table 4: next is worker %d table %d (%v), want worker 2 table 4", w, tb, ok)
	}
	p.done(0)
	if w, tb, ok := p.next(); !ok || w != 0 || tb != 5 {
		t.Fatalf("a free stager slot took worker %d table %d (%v), want the stager and the link (5)", w, tb, ok)
	}
	p.done(1) // worker 1's other table done: it is lost, it takes no more
	p.done(2)
	if w, tb, ok := p.next(); ok {
		t.Fatalf("worker %d took table %d; only the stager may take the compacted table, and it is full", w, tb)
	}
	p.done(0)
	if w, tb, ok := p.next(); !ok || w != 0 || tb != 6 {
		t.Fatalf("next is worker %d table %d (%v), want the stager and the compacted table (6)", w, tb, ok)
	}
}
