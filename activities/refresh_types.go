package activities

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/foldplan"
)

// PlanRefreshInput asks for the plan of a source's next refresh.
type PlanRefreshInput struct {
	Source string
	// TableDeltas off rewrites every changed table in full.
	TableDeltas bool
	// MaxChainAge ends a chain this old (0: foldplan.DefaultMaxChainAge).
	MaxChainAge time.Duration
}

// PlanRefreshResult is the plan with what the workflow needs to run it.
type PlanRefreshResult struct {
	// Prev is the current snapshot the refresh folds from ("" when there is
	// none: the plan is refused).
	Prev    string
	PrevSeq uint64
	// Cut is the capture checkpoint at the start: the new snapshot's position.
	Cut  Position
	Plan foldplan.Plan
	// DumpConfigured: a refused refresh can run a full backup instead.
	DumpConfigured bool
}

// RefreshTableInput executes one table's plan into a staged snapshot.
type RefreshTableInput struct {
	Source     string
	SnapshotID string
	Prev       string
	PrevSeq    uint64
	Cut        Position
	Table      foldplan.TablePlan
}

// RefreshProgress is the heartbeat detail of RefreshTable and CompactTable.
type RefreshProgress struct {
	Table string
	Stage string
	Rows  int64
}

// PublishRefreshInput publishes a refresh: like Publish, but only while the
// source's current snapshot is still Prev (a full backup or another refresh
// that published meanwhile wins, and this one is refused).
type PublishRefreshInput struct {
	PublishInput
	Prev string
}

// CompactTableInput merges the chain files Merge (the plan's choice: the
// first entries of the table's chain in snapshot SnapshotID, from 000000)
// into a range pair under .compact/.
type CompactTableInput struct {
	Source     string
	SnapshotID string
	Schema     string
	Table      string
	Merge      []string
}

// CompactTableResult is the range written ("" Range when there was nothing
// to merge).
type CompactTableResult struct {
	Range       string
	PosdelRows  int64
	UpsertRows  int64
	MergedFiles int
}

// PruneInput applies retention to a source's local snapshots and drops the
// .compact/ ranges of the tables named (used or stale after a refresh).
type PruneInput struct {
	Source        string
	Keep          int
	DropCompacted []foldplan.TableKey
}

// PruneResult lists the removed snapshots.
type PruneResult struct {
	Removed []string
}
