package calls

import (
	"github.com/dbtrail/dbtrail/internal/retention"
)

// RetentionInput names the source of a retention plan. It carries no
// policy: the worker's (activities.Activities.Retention) applies. A Policy field of
// inputs recorded before the policy moved to the worker decodes and is
// ignored.
type RetentionInput struct {
	Source string
}

// ApplyRetentionInput is a plan (PlanRetention's) to apply to the source.
type ApplyRetentionInput struct {
	Source string
	Plan   retention.Plan
}

// RetentionResult is what ApplyRetention did with its plan.
type RetentionResult struct {
	Plan retention.Plan `json:"plan"`
	// Removed are the items removed.
	Removed []retention.Item `json:"removed,omitempty"`
	// Locked are the deletes Object Lock refused: the objects stay whole
	// and a later run tries again.
	Locked []retention.Refused `json:"locked,omitempty"`
	// Failed are the removals that failed for another reason.
	Failed []retention.Refused `json:"failed,omitempty"`
	// Held are archived hours the plan removed and the run kept: a
	// snapshot before them could not be removed.
	Held []retention.Item `json:"held,omitempty"`
	// PartialsRemoved are the partial snapshots (a partial full backup's,
	// kept under .partial/) older than snapshot.PartialMaxAge that nothing
	// removed, removed by this run.
	PartialsRemoved []string `json:"partials_removed,omitempty"`
	// Skipped says why nothing was removed ("" when the plan was applied).
	Skipped string `json:"skipped,omitempty"`
}

// RemoveSnapshotStagingInput names a failed run's snapshot.
type RemoveSnapshotStagingInput struct {
	Source     string
	SnapshotID string
}

// SweepPartsInput names the source whose leftover parts on the store are
// swept.
type SweepPartsInput struct {
	Source string
}

// SweepPartsResult says what SweepParts did: the snapshot ids whose parts
// and owner record are all gone (Removed), how many objects it deleted,
// the objects Object Lock retains (left as they were, their id's owner
// record kept for a later sweep), and the folders it left for a later
// sweep because of something that concerns that folder alone (Skipped).
// Its fields are all empty when nothing was there to do.
type SweepPartsResult struct {
	Removed []string      `json:",omitempty"`
	Deleted int           `json:",omitempty"`
	Locked  []string      `json:",omitempty"`
	Skipped []SkippedPart `json:",omitempty"`
}

// SkippedPart is a folder under <source>/parts/ a sweep left as it was,
// and why.
type SkippedPart struct {
	ID     string
	Reason string
}
