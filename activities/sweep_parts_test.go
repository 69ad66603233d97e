package activities

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// refusingDeletes is a store that refuses to delete some names: Object
// Lock's refusal for those in locked, an access denied for those in
// denied.
type refusingDeletes struct {
	storage.Store
	locked, denied []string
}

func (s refusingDeletes) Delete(ctx context.Context, name string) error {
	switch {
	case slices.Contains(s.locked, name):
		return storage.ErrLocked
	case slices.Contains(s.denied, name):
		return errors.New("AccessDenied: Access Denied")
	}
	return s.Store.Delete(ctx, name)
}

// runsByID is a RunChecker for which the workflow ids in running run,
// those in failing cannot be looked up, and no other runs.
type runsByID struct{ running, failing []string }

func (r runsByID) Running(_ context.Context, workflowID, _ string) (bool, error) {
	if slices.Contains(r.failing, workflowID) {
		return false, errors.New("deadline exceeded")
	}
	return slices.Contains(r.running, workflowID), nil
}

// TestSweepPartsSkipsEachFolderAlone: a folder whose owner record cannot
// be parsed, whose delete is denied, whose run cannot be looked up, or
// whose name is not a snapshot id is skipped and reported, and the others
// are swept; a folder whose every delete Object Lock refuses is reported
// as locked only, its owner record kept, not as removed.
func TestSweepPartsSkipsEachFolderAlone(t *testing.T) {
	ctx := context.Background()
	local, err := storage.NewLocal(t.TempDir())
	must(t, err)
	dir := t.TempDir()
	m, err := remote.New(local, "main", filepath.Join(dir, "backups", "main"), quietLog())
	must(t, err)
	const (
		first, locked, garbled, denied, lookup, last = "20261130T000000Z", "20261130T000100Z", "20261130T000200Z",
			"20261130T000300Z", "20261130T000400Z", "20261130T000500Z"
	)
	put := func(name, body string) {
		must(t, local.Put(ctx, name, strings.NewReader(body), digest.Bytes([]byte(body))))
	}
	for _, id := range []string{first, locked, garbled, denied, lookup, last} {
		wf := "refresh-main"
		if id == lookup {
			wf = "refresh-gone"
		}
		must(t, m.PutPartsOwner(ctx, id, snapshot.Owner{WorkflowID: wf, RunID: "r-" + id}))
		put(m.PartName(id, "3-1", "app/t.parquet"), "t")
	}
	put("main/"+remote.PartsDir+"/"+garbled+".owner", "garbage")
	put("main/"+remote.PartsDir+"/notanid.owner", `{"WorkflowID":"refresh-main","RunID":"r"}`)
	lockedPart := m.PartName(locked, "3-1", "app/t.parquet")
	a := &Activities{BackupDir: filepath.Join(dir, "backups"), WorkDir: filepath.Join(dir, "work"), Log: quietLog(),
		Remote: refusingDeletes{Store: local, locked: []string{lockedPart}, denied: []string{m.PartName(denied, "3-1", "app/t.parquet")}},
		Runs:   runsByID{failing: []string{"refresh-gone"}}}
	res, err := a.SweepParts(ctx, calls.SweepPartsInput{Source: "main"})
	must(t, err)
	if !slices.Equal(res.Removed, []string{first, last}) || res.Deleted != 4 || !slices.Equal(res.Locked, []string{lockedPart}) {
		t.Errorf("swept %+v; want %s and %s removed, %s locked", res, first, last, lockedPart)
	}
	skipped := map[string]string{}
	for _, s := range res.Skipped {
		skipped[s.ID] = s.Reason
	}
	for id, why := range map[string]string{garbled: "not a run", denied: "AccessDenied", lookup: "could not be looked up", "notanid": "malformed snapshot id"} {
		if !strings.Contains(skipped[id], why) {
			t.Errorf("skipped %q; want %s skipped for %q", skipped, id, why)
		}
	}
	if len(skipped) != 4 {
		t.Errorf("skipped %q; want 4", skipped)
	}
	folders, err := m.PartsFolders(ctx)
	must(t, err)
	var left []string
	for _, f := range folders {
		if f.Parts != 1 && f.ID != "notanid" || (f.Owner == nil) != (f.ID == garbled || f.ID == "notanid") {
			t.Errorf("left %+v; want its part and its owner record", f)
		}
		left = append(left, f.ID)
	}
	if !slices.Equal(left, []string{locked, garbled, denied, lookup, "notanid"}) {
		t.Errorf("left %v", left)
	}

	a.Remote, a.Runs = local, runsByID{} // the retention over, the run looked up
	res, err = a.SweepParts(ctx, calls.SweepPartsInput{Source: "main"})
	must(t, err)
	if !slices.Equal(res.Removed, []string{locked, denied, lookup}) || len(res.Locked) != 0 || len(res.Skipped) != 2 {
		t.Errorf("second sweep %+v", res)
	}
}

// TestSweepPartsNothingToDo: a store with no parts, or only parts whose
// run still runs, gives an empty result.
func TestSweepPartsNothingToDo(t *testing.T) {
	ctx := context.Background()
	local, err := storage.NewLocal(t.TempDir())
	must(t, err)
	dir := t.TempDir()
	a := &Activities{BackupDir: filepath.Join(dir, "backups"), Log: quietLog(), Remote: local, Runs: runsByID{running: []string{"refresh-main"}}}
	for _, owned := range []bool{false, true} {
		if owned {
			m, err := remote.New(local, "main", a.sourceDir("main"), quietLog())
			must(t, err)
			must(t, m.PutPartsOwner(ctx, "20261130T000000Z", snapshot.Owner{WorkflowID: "refresh-main", RunID: "r"}))
			must(t, local.Put(ctx, m.PartName("20261130T000000Z", "3-1", "t"), strings.NewReader("t"), digest.Bytes([]byte("t"))))
		}
		res, err := a.SweepParts(ctx, calls.SweepPartsInput{Source: "main"})
		if err != nil || res.Removed != nil || res.Deleted != 0 || res.Locked != nil || res.Skipped != nil {
			t.Fatalf("parts of a running run %v: %+v, %v", owned, res, err)
		}
	}
}
