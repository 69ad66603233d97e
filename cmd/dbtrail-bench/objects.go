package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// benchObjects measures what object storage holds after a table is
// refreshed many times: a table of n rows is published and uploaded to a
// real S3 server (versitygw on loopback) with the UploadSnapshot activity,
// then refreshes times 1% of its rows change (distinct rows each time), a
// pair is folded and published on the previous snapshot, and uploaded. The
// measure is the bytes the bucket lists under the source after the last
// upload, against what was written: the first snapshot's files plus each
// refresh's new pair. The layout before content objects held every file of
// every snapshot; that figure is computed from the manifests.
func benchObjects(ctx context.Context, n, refreshes int) ([]result, error) {
	if refreshes < 1 || refreshes > 99 || n < 100 {
		return nil, fmt.Errorf("objects bench: %d refreshes of %d rows: want 1 to 99 refreshes of at least 100 rows", refreshes, n)
	}
	env, _, stop, err := startRefreshEnv(ctx, "objects")
	if err != nil {
		return nil, err
	}
	defer stop()
	tb, err := env.buildTable(n)
	if err != nil {
		return nil, err
	}
	acts, stopS3, err := env.withS3(ctx, "objects")
	if err != nil {
		return nil, err
	}
	defer stopS3()
	store := acts.Remote
	if _, err := executeUpload(acts, calls.UploadSnapshotInput{Source: tb.source, SnapshotID: refreshPrevID}); err != nil {
		return nil, fmt.Errorf("upload the first snapshot: %w", err)
	}
	m := objectsRun{prev: refreshPrevID, chain: tb.mt.Chain, links: tb.links}
	if m.written, err = snapshotBytes(env.sourceDir(tb.source), refreshPrevID); err != nil {
		return nil, err
	}
	m.everyFile = m.written
	k := n / 100
	for j := 1; j <= refreshes; j++ {
		if err := m.refresh(ctx, env, acts, tb, j, k); err != nil {
			return nil, fmt.Errorf("refresh %d of %d: %w", j, refreshes, err)
		}
	}
	var stored int64
	if err := store.List(ctx, tb.source+"/", func(i storage.Info) error { stored += i.Size; return nil }); err != nil {
		return nil, err
	}
	ratio := float64(stored) / float64(m.written)
	before := float64(m.everyFile) / float64(m.written)
	return []result{
		{fmt.Sprintf("objects: bucket after %d refreshes of %s rows, 1%% changed each", refreshes, thousands(n)),
			fmt.Sprintf("%.1f MiB stored, %.1f MiB written", mib(stored), mib(m.written)), "",
			fmt.Sprintf("written: the first snapshot's files (table file %.1f MiB) and each refresh's pair; every file of every snapshot: %.1f MiB (%.1fx written, the layout before content objects, from the manifests)",
				mib(tb.size), mib(m.everyFile), before)},
		judged("objects: ratio bucket bytes / (table file + changes written)", fmt.Sprintf("%.3f", ratio), "", measured(ratio, atMost(1.5, "%.1f"))),
		{"objects: a refresh's upload", fmt.Sprintf("%.3f s mean, %d copies in the bucket", m.uploadTime.Seconds()/float64(refreshes), m.copied), "",
			fmt.Sprintf("UploadSnapshot of each refresh; its unchanged files (%d in all, %.1f MiB) found by content with one HEAD each", m.skipped, mib(m.bytesSkipped))},
	}, nil
}

// objectsRun is the state of benchObjects between refreshes.
type objectsRun struct {
	prev       string
	chain      []string
	links      []foldplan.Link
	written    int64 // the first snapshot's bytes and each refresh's new files
	everyFile  int64 // the bytes of every file of every snapshot
	uploadTime time.Duration
	copied     int
	skipped    int
	// bytesSkipped are the bytes of the files uploads found by content.
	bytesSkipped int64
}

// refresh commits the j-th window (rows j, j+100, ... : k of them, each
// changed once over the run), folds it as a pair on the previous snapshot,
// publishes and uploads it.
func (m *objectsRun) refresh(ctx context.Context, env *refreshEnv, acts *activities.Activities, tb *refreshFixture, j, k int) error {
	prevSeq := tb.nextSeq - 1
	now := time.Now().UTC().Truncate(time.Microsecond)
	var endPos uint64
	evs := make([]change.Event, 0, 5000)
	for i := range k {
		ev, err := env.updateEvent(tb.nextSeq, now, refreshTable, j+100*i, 0, j)
		if err != nil {
			return err
		}
		tb.nextSeq++
		endPos = ev.EndPos
		if evs = append(evs, ev); len(evs) == cap(evs) || i == k-1 {
			if err := env.commitEvents(ctx, tb.source, evs); err != nil {
				return err
			}
			evs = evs[:0]
		}
	}
	id := env.nextID()
	tp := foldplan.TablePlan{Key: foldplan.TableKey{Schema: refreshSchema, Table: refreshTable}, Action: foldplan.ActionPair,
		Reason: "bench", Changes: int64(k), Kind: snapshot.KindDelta, Next: j, Chain: m.chain, Links: m.links}
	in := calls.RefreshTableInput{Source: tb.source, SnapshotID: id, Prev: m.prev, PrevSeq: prevSeq,
		Cut: binlogpos.Position{File: refreshBinlog, Pos: endPos, Seq: tb.nextSeq - 1}, Table: tp}
	if err := executePublishedPair(acts, in); err != nil {
		return err
	}
	began := time.Now()
	up, err := executeUpload(acts, calls.UploadSnapshotInput{Source: tb.source, SnapshotID: id})
	if err != nil {
		return err
	}
	m.uploadTime += time.Since(began)
	m.copied += up.FilesCopied
	for _, st := range up.Snapshots {
		m.skipped += st.Skipped
		m.bytesSkipped += st.BytesSkipped
	}
	s, err := snapshot.OpenSnapshot(snapshot.Folder(env.sourceDir(tb.source)).Snapshot(id))
	if err != nil {
		return err
	}
	mt := s.Manifest.Tables[0]
	m.links = nil
	for _, rel := range append([]string{mt.File}, mt.Chain...) {
		m.links = append(m.links, foldplan.Link{Dst: rel, Src: rel, Digest: s.Manifest.Files[rel]})
	}
	for _, rel := range mt.Chain[len(m.chain):] {
		m.written += s.Manifest.Files[rel].Size
	}
	total, err := snapshotBytes(env.sourceDir(tb.source), id)
	if err != nil {
		return err
	}
	m.everyFile += total
	m.chain, m.prev = mt.Chain, id
	return nil
}

// snapshotBytes is the bytes of the files the local snapshot id's
// manifest lists, and of the manifest.
func snapshotBytes(dir, id string) (int64, error) {
	s, err := snapshot.OpenSnapshot(snapshot.Folder(dir).Snapshot(id))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, d := range s.Manifest.Files {
		n += d.Size
	}
	fi, err := os.Stat(s.Path(snapshot.ManifestName))
	if err != nil {
		return 0, err
	}
	return n + fi.Size(), nil
}
