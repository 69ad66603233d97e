package activities

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// publishAt publishes a one-table snapshot id of source main in dir (a
// table file of size bytes) and makes it current.
func publishAt(t *testing.T, dir, id string, seq uint64, size int) {
	t.Helper()
	b, err := snapshot.NewBuilder(dir, id)
	must(t, err)
	mt := snapshot.ManifestTable{Schema: "db", Table: "t", File: "db/t.parquet", Kind: snapshot.KindDelta}
	_, err = b.WriteFile(mt.File, func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Repeat("x", size))
		return err
	})
	must(t, err)
	must(t, b.Publish(snapshot.Manifest{Source: "main", Position: binlogpos.Position{Seq: seq}, Kind: snapshot.SnapshotFull,
		Tables: []snapshot.ManifestTable{mt}}))
}

// TestRetentionRunsBeforeARefreshShortOfSpace: a refresh step short of room
// runs the worker's retention first when it would remove something, and
// goes on when that freed enough; the current snapshot stays. Without a
// policy, or when retention frees nothing, the step is refused NoRoom as
// before, nothing removed.
func TestRetentionRunsBeforeARefreshShortOfSpace(t *testing.T) {
	ctx := context.Background()
	const need = 1 << 20
	ids := []string{"20261201T100000Z", "20261201T110000Z", "20261201T120000Z"}
	setup := func(t *testing.T) (*Activities, string) {
		a := &Activities{BackupDir: filepath.Join(t.TempDir(), "backups"), WorkDir: t.TempDir(), Log: quietLog()}
		dir := a.sourceDir("main")
		for i, id := range ids {
			publishAt(t, dir, id, uint64(10*(i+1)), 100)
		}
		// The folder has room only once the two older snapshots are gone.
		a.Disk = func(string) (uint64, error) {
			for _, id := range ids[:2] {
				if _, err := os.Stat(snapshot.Folder(dir).Snapshot(id)); err == nil {
					return need - 1, nil
				}
			}
			return need, nil
		}
		return a, dir
	}
	t.Run("retention frees the room", func(t *testing.T) {
		a, dir := setup(t)
		a.Retention = retention.Policy{KeepSnapshots: 1}
		if err := a.checkSpaceOrRetain(ctx, "main", dir, spaceneed.Exact(need), "pair db.t"); err != nil {
			t.Fatalf("with retention that frees the room: %v", err)
		}
		left, err := snapshot.ListSnapshots(dir)
		must(t, err)
		if len(left) != 1 || left[0] != ids[2] {
			t.Fatalf("snapshots left %v, want only the current %s", left, ids[2])
		}
	})
	for name, policy := range map[string]retention.Policy{
		"no policy":               {},
		"retention frees nothing": {KeepSnapshots: 3},
	} {
		t.Run(name, func(t *testing.T) {
			a, dir := setup(t)
			a.Retention = policy
			err := a.checkSpaceOrRetain(ctx, "main", dir, spaceneed.Exact(need), "pair db.t")
			if !isNoSpace(err) || !strings.Contains(err.Error(), "pair db.t needs about") {
				t.Fatalf("got %v, want NoRoom naming the step", err)
			}
			left, lerr := snapshot.ListSnapshots(dir)
			must(t, lerr)
			if len(left) != len(ids) {
				t.Fatalf("snapshots left %v, want all of %v", left, ids)
			}
		})
	}
}
