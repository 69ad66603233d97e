package index

import (
	"context"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestFolderSpace: a worker's record replaces its own rows only (a folder
// it no longer has goes), an unmeasurable folder keeps its reason and no
// free space, and a worker silent for FolderSpaceKeep is forgotten at the
// next record of any worker.
func TestFolderSpace(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_space")
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 18, 0, 0, 123000000, time.UTC)
	rec := func(worker string, at time.Time, fs ...FolderSpace) {
		t.Helper()
		for i := range fs {
			fs[i].MeasuredAt = at
		}
		if err := s.RecordFolderSpace(ctx, worker, fs, at); err != nil {
			t.Fatal(err)
		}
	}
	list := func() []FolderSpace {
		t.Helper()
		fs, err := s.FolderSpaces(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	old := now.Add(-FolderSpaceKeep - time.Minute)
	rec("1@old", old, FolderSpace{Folder: "backup", Path: "/old", Free: 1})
	rec("2@a", now, FolderSpace{Folder: "backup", Path: "/b", Free: 1 << 62}, FolderSpace{Folder: "dump", Path: "/w/main", Free: 5})
	rec("3@b", now, FolderSpace{Folder: "work", Path: "/gone", Error: "statfs /gone: no such file or directory"})
	rec("2@a", now.Add(time.Second), FolderSpace{Folder: "backup", Path: "/b", Free: 7})
	got := list()
	if len(got) != 2 {
		t.Fatalf("folders %+v, want 2@a's backup and 3@b's work (1@old forgotten, 2@a's dump gone)", got)
	}
	if g := got[0]; g.Worker != "2@a" || g.Folder != "backup" || g.Path != "/b" || g.Free != 7 || g.Error != "" || !g.MeasuredAt.Equal(now.Add(time.Second)) {
		t.Errorf("first %+v", g)
	}
	if g := got[1]; g.Worker != "3@b" || g.Folder != "work" || g.Free != 0 || g.Error != "statfs /gone: no such file or directory" || !g.MeasuredAt.Equal(now) {
		t.Errorf("second %+v", g)
	}
	if err := s.RecordFolderSpace(ctx, "", nil, now); err == nil {
		t.Error("a record without a worker identity was taken")
	}
}
