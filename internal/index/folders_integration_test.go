package index

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestFolderSpace: a worker's record replaces its own rows only (a folder
// it no longer has goes), rows are stamped and aged by the index server's
// clock, an unmeasurable folder keeps its reason and no free space, a nil
// record removes the worker's rows, a worker silent for FolderSpaceKeep is
// forgotten at the next record of any worker, and an index that predates
// the table answers ErrNoFolderSpace.
func TestFolderSpace(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_space")
	ctx := context.Background()
	rec := func(worker string, fs ...FolderSpace) {
		t.Helper()
		if err := s.RecordFolderSpace(ctx, worker, fs); err != nil {
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
	rec("1@old", FolderSpace{Folder: "backup", Path: "/old", Free: 1})
	if _, err := s.DB().ExecContext(ctx, "UPDATE folder_space SET measured_at = UTC_TIMESTAMP(6) - INTERVAL 8 DAY WHERE worker = '1@old'"); err != nil {
		t.Fatal(err)
	}
	rec("4@gone", FolderSpace{Folder: "backup", Path: "/g", Free: 1})
	rec("2@a", FolderSpace{Folder: "backup", Path: "/b", Free: 1 << 62}, FolderSpace{Folder: "dump", Path: "/w/main", Free: 5})
	rec("3@b", FolderSpace{Folder: "work", Path: "/gone", Error: "statfs /gone: no such file or directory"})
	rec("2@a", FolderSpace{Folder: "backup", Path: "/b", Free: 7})
	rec("4@gone")
	got := list()
	if len(got) != 2 {
		t.Fatalf("folders %+v, want 2@a's backup and 3@b's work (1@old forgotten, 2@a's dump gone, 4@gone stopped)", got)
	}
	if g := got[0]; g.Worker != "2@a" || g.Folder != "backup" || g.Path != "/b" || g.Free != 7 || g.Error != "" || g.MeasuredAt.IsZero() || g.Age < 0 || g.Age > time.Minute {
		t.Errorf("first %+v", g)
	}
	if g := got[1]; g.Worker != "3@b" || g.Folder != "work" || g.Free != 0 || g.Error != "statfs /gone: no such file or directory" {
		t.Errorf("second %+v", g)
	}
	if _, err := s.DB().ExecContext(ctx, "UPDATE folder_space SET measured_at = measured_at - INTERVAL 1 HOUR WHERE worker = '3@b'"); err != nil {
		t.Fatal(err)
	}
	if g := list()[1]; g.Age < time.Hour || g.Age > time.Hour+time.Minute {
		t.Errorf("age of a record an hour old: %v", g.Age)
	}
	if err := s.RecordFolderSpace(ctx, "", nil); err == nil {
		t.Error("a record without a worker identity was taken")
	}
	if _, err := s.DB().ExecContext(ctx, "DROP TABLE folder_space"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FolderSpaces(ctx); !errors.Is(err, ErrNoFolderSpace) {
		t.Errorf("an index without folder_space: %v, want ErrNoFolderSpace", err)
	}
}
