package activities

import (
	"context"
	"slices"

	"github.com/dbtrail/dbtrail/internal/remote"
)

// SweepPartsInput names the source whose leftover parts on the store are
// swept.
type SweepPartsInput struct {
	Source string
}

// SweepPartsResult says what SweepParts removed: the snapshot ids whose
// parts (or owner record alone) it deleted, how many objects, and those
// Object Lock retains (left as they were).
type SweepPartsResult struct {
	Removed []string `json:",omitempty"`
	Deleted int      `json:",omitempty"`
	Locked  []string `json:",omitempty"`
}

// SweepParts deletes the source's leftover parts on the store: those of a
// snapshot id whose owner run (recorded by its shared tables) Temporal
// says no longer runs, unless the id is a published snapshot of this
// worker not yet confirmed on the store (remote.PartsOrphan). It runs on
// the stager before a refresh allocates its snapshot. Without a remote
// store or a way to ask Temporal (a.Runs), it does nothing; a run that
// cannot be looked up keeps its parts. It logs each id removed and why,
// and each id kept with parts but no owner recorded.
func (a *Activities) SweepParts(ctx context.Context, in SweepPartsInput) (SweepPartsResult, error) {
	var out SweepPartsResult
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
	log := a.log(ctx)
	for _, f := range folders {
		run := remote.RunUnknown
		if f.Owner != nil {
			running, err := a.Runs.Running(ctx, f.Owner.WorkflowID, f.Owner.RunID)
			switch {
			case err != nil:
				log.Warn("leftover parts kept: their run could not be looked up", "source", in.Source, "snapshot", f.ID,
					"owner_workflow_id", f.Owner.WorkflowID, "owner_run_id", f.Owner.RunID, "error", err.Error())
			case running:
				run = remote.RunRunning
			default:
				run = remote.RunEnded
			}
		}
		orphan, why := remote.PartsOrphan(f, run, slices.Contains(pending, f.ID))
		if !orphan {
			if f.Owner == nil {
				log.Warn("leftover parts kept", "source", in.Source, "snapshot", f.ID, "parts", f.Parts, "reason", why)
			}
			continue
		}
		d, err := m.SweepParts(ctx, f.ID)
		out.Deleted += len(d.Deleted)
		out.Locked = append(out.Locked, d.Locked...)
		if err != nil {
			return out, err
		}
		out.Removed = append(out.Removed, f.ID)
		log.Info("leftover parts removed", "source", in.Source, "snapshot", f.ID, "parts", f.Parts, "reason", why,
			"owner_workflow_id", f.Owner.WorkflowID, "owner_run_id", f.Owner.RunID, "deleted", len(d.Deleted), "locked", len(d.Locked))
	}
	return out, nil
}
