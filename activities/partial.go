package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// FinishPartial seals a partial full backup's staging folder as a partial
// snapshot (snapshot.Builder.FinishPartial: manifest kind partial, under
// .partial/<id>; current untouched, nothing uploaded) and records the
// re-dump in the index (table redumps: tables, rows read from the source,
// start and end), where `dbtrail status` reads the last one. A retry after
// success finishes nothing again and writes the same record (its end
// time the retry's).
func (a *Activities) FinishPartial(ctx context.Context, in calls.FinishPartialInput) (calls.FinishPartialResult, error) {
	dir := a.sourceDir(in.Source)
	b, err := snapshot.AttachBuilder(dir, in.SnapshotID)
	if err != nil {
		return calls.FinishPartialResult{}, err
	}
	m, err := manifestOf(in.PublishInput)
	if err != nil {
		return calls.FinishPartialResult{}, err
	}
	m.Kind = snapshot.SnapshotPartial
	for rel, d := range m.Files {
		if err := b.Adopt(rel, d); err != nil {
			return calls.FinishPartialResult{}, err
		}
	}
	if err := b.FinishPartial(m); err != nil {
		return calls.FinishPartialResult{}, err
	}
	if err := snapshot.RemoveStaging(dir, in.SnapshotID); err != nil {
		return calls.FinishPartialResult{}, err
	}
	rec := index.Redump{Source: in.Source, StartedAt: in.Started.UTC(), Finished: time.Now().UTC(), Snapshot: in.SnapshotID,
		Seq: in.Position.Seq}
	for _, t := range in.Tables {
		rec.Tables = append(rec.Tables, t.Schema+"."+t.Table)
		rec.Rows += t.Rows
	}
	if err := a.Index.RecordRedump(ctx, rec); err != nil {
		return calls.FinishPartialResult{}, err
	}
	a.log(ctx).Info("partial snapshot finished", "source", in.Source, "snapshot", in.SnapshotID, "tables", len(in.Tables), "rows", rec.Rows)
	return calls.FinishPartialResult{SnapshotID: in.SnapshotID, Dir: snapshot.Folder(dir).Partial(in.SnapshotID), Redump: rec}, nil
}

// RemovePartial removes a partial snapshot (snapshot.RemovePartial): one
// already gone is success; it refuses (BadInput) an id that is malformed
// or names anything but a partial snapshot, and never touches a published
// one.
func (a *Activities) RemovePartial(ctx context.Context, in calls.RemovePartialInput) error {
	if _, err := a.source(in.Source); err != nil {
		return err
	}
	if _, err := snapshot.ParseSnapshotID(in.SnapshotID); err != nil {
		return badInput(fmt.Errorf("remove partial snapshot of %s: %w", in.Source, err))
	}
	err := snapshot.RemovePartial(a.sourceDir(in.Source), in.SnapshotID)
	if errors.Is(err, snapshot.ErrNotPartial) {
		return badInput(err)
	}
	if err != nil {
		return err
	}
	a.log(ctx).Info("partial snapshot removed", "source", in.Source, "snapshot", in.SnapshotID)
	return nil
}
