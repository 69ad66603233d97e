package activities

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// AllocateSnapshot picks a snapshot id no snapshot of the source has used,
// locally or on the remote store, and starts its staging folder (removing
// what a crashed attempt of the same id left), recorded as this run's;
// staging folders of runs that no longer run are removed (ownStaging). A
// source folder that cannot be made (the backup folder is a file, or not
// writable) fails at once, naming the path.
func (a *Activities) AllocateSnapshot(ctx context.Context, in calls.AllocateSnapshotInput) (calls.AllocateSnapshotResult, error) {
	dir := a.sourceDir(in.Source)
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return calls.AllocateSnapshotResult{}, fmt.Errorf("folder of source %s: %w", in.Source, err)
	}
	id, err := snapshot.NewSnapshotID(time.Now(), a.remoteTaken(ctx, in.Source, snapshot.ExistsIn(dir)))
	if err != nil {
		return calls.AllocateSnapshotResult{}, fmt.Errorf("new snapshot id of %s: %w", in.Source, err)
	}
	if _, err := snapshot.NewBuilder(dir, id); err != nil {
		return calls.AllocateSnapshotResult{}, err
	}
	if err := a.ownStaging(ctx, in.Source, id); err != nil {
		return calls.AllocateSnapshotResult{}, err
	}
	return calls.AllocateSnapshotResult{SnapshotID: id}, nil
}

// ConvertTable writes one dumped table as its Parquet table file, with its
// empty chain start, into the snapshot's staging folder. It heartbeats after
// each data file; a retry rewrites the table from the start (a Parquet file
// cannot be appended to), which is idempotent: the same dump gives the same
// rows. Bad input is a non-retryable error naming file and line; a backup
// folder with less room than the estimate (dumpconv.Estimate: a sample of
// the dump converted, scaled to its files, × spaceneed.Margin) is NoRoom,
// before anything is written.
func (a *Activities) ConvertTable(ctx context.Context, in calls.ConvertTableInput) (calls.ConvertTableResult, error) {
	t := in.Table
	fsys := os.DirFS(in.DumpDir)
	def, create, err := dumpconv.Definition(fsys, t.Schema, t.Table, t.SchemaFile)
	if err != nil {
		return calls.ConvertTableResult{}, badInput(err)
	}
	meta := snapshot.FooterMeta{CreateTable: create, SnapshotID: in.SnapshotID, Source: in.Source,
		Position: in.Position}
	est, _, err := dumpconv.Estimate(ctx, fsys, t.DataFiles, def, meta)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	if err := a.checkSpace(a.sourceDir(in.Source), est, "convert "+t.Schema+"."+t.Table); err != nil {
		return calls.ConvertTableResult{}, err
	}
	b, err := snapshot.AttachBuilder(a.sourceDir(in.Source), in.SnapshotID)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	rel, err := snapshot.TableFile(t.Schema, t.Table)
	if err != nil {
		return calls.ConvertTableResult{}, badInput(err)
	}
	var res snapshot.WriteResult
	digest, err := b.WriteFile(rel, func(w io.Writer) error {
		tw, err := snapshot.NewTableWriter(w, def, meta, snapshot.WriterOptions{Overlap: true})
		if err != nil {
			return err
		}
		defer tw.Abort() // after a failure: no write to w once WriteFile ends
		sink, done, err := floatSink(in, def, tw)
		if err != nil {
			return err
		}
		defer done()
		err = dumpconv.Convert(ctx, fsys, t.DataFiles, def, sink, func(file int, rows int64) {
			activity.RecordHeartbeat(ctx, calls.ConvertProgress{Table: t.Schema + "." + t.Table, File: file, Rows: rows})
		})
		if err != nil {
			return err
		}
		res, err = tw.Close()
		return err
	})
	if err != nil {
		if dumpconv.IsBadInput(err) {
			return calls.ConvertTableResult{}, badInput(fmt.Errorf("convert table %s.%s: %w", t.Schema, t.Table, err))
		}
		return calls.ConvertTableResult{}, noSpace(err, a.sourceDir(in.Source), "convert "+t.Schema+"."+t.Table)
	}
	out := calls.ConvertTableResult{Schema: t.Schema, Table: t.Table, File: rel, Rows: res.Rows,
		Fingerprint: res.Fingerprint.String(), SHA256: digest.SHA256, Size: digest.Size}
	if err := addEmptyChain(b, def, &out); err != nil {
		return calls.ConvertTableResult{}, noSpace(err, a.sourceDir(in.Source), "convert "+t.Schema+"."+t.Table)
	}
	out.Space = spaceneed.Record(spaceneed.KindConvert, est, writtenBytes(nil, out))
	activity.RecordHeartbeat(ctx, calls.ConvertProgress{Table: t.Schema + "." + t.Table, Rows: res.Rows, Done: true})
	return out, nil
}

// Publish writes the manifest and makes the snapshot current. Publishing a
// snapshot that is already published with the same manifest succeeds.
func (a *Activities) Publish(ctx context.Context, in calls.PublishInput) (calls.PublishResult, error) {
	return a.publish(ctx, in, "", func(*snapshot.Manifest) {})
}

// PublishRefresh publishes a refresh like Publish, under the source's
// publish lock and only while current still names in.Prev (or already names
// this snapshot: a retry after success). A snapshot published meanwhile (a
// full backup, another refresh) wins: this one is refused, non-retryable,
// and its staging folder is left for the next NewBuilder of its id to clear.
func (a *Activities) PublishRefresh(ctx context.Context, in calls.PublishRefreshInput) (calls.PublishResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	return a.publish(ctx, in.PublishInput, in.Prev, func(m *snapshot.Manifest) {
		m.Kind, m.Prev = snapshot.SnapshotRefresh, in.Prev
	})
}

// publish builds the manifest of in, lets fill complete it, and publishes
// it under the publish lock; a non-empty expect must be current.
func (a *Activities) publish(ctx context.Context, in calls.PublishInput, expect string, fill func(*snapshot.Manifest)) (calls.PublishResult, error) {
	dir := a.sourceDir(in.Source)
	unlock, err := snapshot.LockPublish(ctx, dir)
	if err != nil {
		return calls.PublishResult{}, err
	}
	defer unlock()
	if expect != "" {
		cur, err := snapshot.ResolveCurrent(dir)
		if err != nil {
			return calls.PublishResult{}, err
		}
		if cur != expect && cur != in.SnapshotID {
			return calls.PublishResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"snapshot %s was folded from %s, but %s was published meanwhile: not published", in.SnapshotID, expect, cur), payload.ErrCurrentMoved, nil)
		}
	}
	b, err := snapshot.AttachBuilder(dir, in.SnapshotID)
	if err != nil {
		return calls.PublishResult{}, err
	}
	m, err := manifestOf(in)
	if err != nil {
		return calls.PublishResult{}, err
	}
	fill(&m)
	for rel, d := range m.Files {
		if err := b.Adopt(rel, d); err != nil {
			return calls.PublishResult{}, err
		}
	}
	if err := b.Publish(m); err != nil {
		return calls.PublishResult{}, err
	}
	// The staging folder is now the snapshot: its owner file goes too.
	if err := snapshot.RemoveStaging(dir, in.SnapshotID); err != nil {
		return calls.PublishResult{}, err
	}
	return calls.PublishResult{SnapshotID: in.SnapshotID, Dir: snapshotDir(dir, in.SnapshotID)}, nil
}

// manifestOf lists the tables and files of a publish.
func manifestOf(in calls.PublishInput) (snapshot.Manifest, error) {
	m := snapshot.Manifest{SnapshotID: in.SnapshotID, Source: in.Source, Kind: snapshot.SnapshotFull, Position: in.Position,
		Files: map[string]digest.Digest{}}
	for _, t := range in.Tables {
		fp, err := snapshot.ParseFingerprint(t.Fingerprint)
		if err != nil {
			return snapshot.Manifest{}, badInput(err)
		}
		chain := make([]snapshot.FileDigest, len(t.Chain))
		for i, c := range t.Chain {
			chain[i] = snapshot.FileDigest{Path: c.Path, Digest: digest.Digest{SHA256: c.SHA256, Size: c.Size}}
		}
		m.AddTable(snapshot.ManifestTable{Schema: t.Schema, Table: t.Table, File: t.File, Rows: t.Rows, Fingerprint: fp,
			Kind: t.Kind, Origin: t.Origin, CreateTable: t.CreateTable}, digest.Digest{SHA256: t.SHA256, Size: t.Size}, chain...)
	}
	return m, nil
}

// addEmptyChain writes the table's empty 000000 pair into b and lists it in
// out.Chain; a table always written in full gets none.
func addEmptyChain(b *snapshot.Builder, def *schema.Table, out *calls.ConvertTableResult) error {
	if snapshot.FullOnly(def) {
		return nil
	}
	chain, err := snapshot.WriteEmptyChainStart(b, def)
	if err != nil {
		return err
	}
	files := b.Files()
	for _, c := range chain {
		out.Chain = append(out.Chain, calls.ChainFile{Path: c, SHA256: files[c].SHA256, Size: files[c].Size})
	}
	return nil
}

func snapshotDir(sourceDir, id string) string {
	return snapshot.Folder(sourceDir).Snapshot(id)
}
