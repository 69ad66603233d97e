package activities

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestRefreshRefusesDroppedHours: on a worker without an archive location,
// a refresh whose window reaches an archived hour that has left the index
// is refused with the hour named; an hour archived but still in the index,
// or wholly before the window, is no reason. A worker with an archive
// location folds the archived hours instead (no reason at all).
func TestRefreshRefusesDroppedHours(t *testing.T) {
	srv := testsuite.StartIndex(t)
	ctx := context.Background()
	if err := srv.Exec(ctx, "CREATE DATABASE dropped"); err != nil {
		t.Fatal(err)
	}
	st, err := index.Open(ctx, srv.DSN("dropped"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Init(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	hour := change.HourID(now) - 30
	for i, r := range []struct {
		first, last uint64
		dropped     bool
	}{{1, 100, true}, {101, 200, true}, {201, 300, false}} {
		a := change.Archive{Source: "main", Hour: hour + uint32(i), Object: "main/archives/x.parquet", Location: "file:///x",
			Size: 1, SHA256: strings.Repeat("a", 64), Events: int64(r.last - r.first + 1), FirstSeq: r.first, LastSeq: r.last}
		if err := st.RecordArchive(ctx, a); err != nil {
			t.Fatal(err)
		}
		if r.dropped {
			if err := st.MarkDropped(ctx, "main", a.Hour, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := &Activities{Index: st}
	for prev, want := range map[uint64]string{
		50:  "seq 50) reach archived hour " + change.HourTime(hour).Format("2006-01-02T15Z"),
		150: "reach archived hour " + change.HourTime(hour+1).Format("2006-01-02T15Z") + " (seqs 101..200)",
		200: "",
		250: "",
	} {
		why, err := a.droppedInWindow(ctx, "main", prev)
		if err != nil {
			t.Fatal(err)
		}
		if (want == "") != (why == "") || !strings.Contains(why, want) {
			t.Errorf("previous snapshot at seq %d: %q, want %q", prev, why, want)
		}
	}
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a.Remote = local
	if why, err := a.droppedInWindow(ctx, "main", 50); err != nil || why != "" {
		t.Errorf("with an archive location: %q %v, want no reason", why, err)
	}
}
