package activities

import (
	"context"
	"log/slog"
	"slices"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/remote"
)

// SweepParts deletes the source's leftover parts on the store: those of a
// snapshot id whose owner run (recorded by its shared tables) Temporal
// says no longer runs, unless the id is a published snapshot of this
// worker not yet confirmed on the store (remote.PartsOrphan). It runs on
// the stager before a refresh allocates its snapshot. Without a remote
// store or a way to ask Temporal (a.Runs), it does nothing; a run that
// cannot be looked up keeps its parts. It fails only for what concerns
// the whole sweep (the listing of parts, this worker's pending uploads):
// a folder it cannot judge or sweep (a name that is not a snapshot id, an
// owner record it cannot read, a run it cannot look up, a delete refused)
// is logged, listed in Skipped and left to the next sweep, and the other
// folders are swept. It logs each id removed and why, each id kept with
// parts but no owner recorded, and each whose objects Object Lock retains.
func (a *Activities) SweepParts(ctx context.Context, in calls.SweepPartsInput) (calls.SweepPartsResult, error) {
	var out calls.SweepPartsResult
	if a.Remote == nil || a.Runs == nil {
		return out, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return out, err
	}
	folders, err := m.PartsFolders(ctx)
	if err != nil || len(folders) == 0 {
		return out, err
	}
	pending, err := m.Pending("")
	if err != nil {
		return out, err
	}
	log := a.log(ctx).With("source", in.Source)
	skip := func(f remote.PartsFolder, reason string) {
		log.Warn("leftover parts skipped", "snapshot", f.ID, "parts", f.Parts, "reason", reason)
		out.Skipped = append(out.Skipped, calls.SkippedPart{ID: f.ID, Reason: reason})
	}
	for _, f := range folders {
		if f.Err != nil {
			skip(f, f.Err.Error())
			continue
		}
		run := remote.RunUnknown
		if f.Owner != nil {
			running, err := a.Runs.Running(ctx, f.Owner.WorkflowID, f.Owner.RunID)
			switch {
			case err != nil:
				skip(f, "its run "+f.Owner.WorkflowID+" "+f.Owner.RunID+" could not be looked up: "+err.Error())
				continue
			case running:
				run = remote.RunRunning
			default:
				run = remote.RunEnded
			}
		}
		orphan, why := remote.PartsOrphan(f, run, slices.Contains(pending, f.ID))
		if !orphan {
			if f.Owner == nil {
				log.Warn("leftover parts kept", "snapshot", f.ID, "parts", f.Parts, "reason", why)
			}
			continue
		}
		d, err := m.SweepParts(ctx, f.ID, *f.Owner)
		out.Deleted += len(d.Deleted)
		out.Locked = append(out.Locked, d.Locked...)
		if err != nil {
			skip(f, err.Error())
			continue
		}
		reportSwept(log, &out, f, why, d)
	}
	return out, nil
}

// reportSwept logs what SweepParts did with folder f, orphan for reason
// why, and adds it to out: Removed when it is all gone, Skipped when parts
// were put during the sweep.
func reportSwept(log *slog.Logger, out *calls.SweepPartsResult, f remote.PartsFolder, why string, d remote.Swept) {
	attrs := []any{"snapshot", f.ID, "parts", f.Parts, "reason", why, "owner_workflow_id", f.Owner.WorkflowID,
		"owner_run_id", f.Owner.RunID, "deleted", len(d.Deleted), "locked", len(d.Locked)}
	switch {
	case len(d.Late) > 0:
		out.Skipped = append(out.Skipped, calls.SkippedPart{ID: f.ID, Reason: "parts put during the sweep: its owner record put back for the next sweep"})
		log.Warn("leftover parts: parts put during the sweep, owner record put back", append(attrs, "late", len(d.Late))...)
	case len(d.Locked) > 0 && len(d.Deleted) == 0:
		log.Warn("leftover parts retained by Object Lock: owner record kept for a later sweep", attrs...)
	case len(d.Locked) > 0:
		log.Warn("leftover parts partly removed: Object Lock retains the rest, owner record kept for a later sweep", attrs...)
	default:
		out.Removed = append(out.Removed, f.ID)
		log.Info("leftover parts removed", attrs...)
	}
}
