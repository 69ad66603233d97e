package calls

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// FinishPartialInput finishes a partial full backup's staged snapshot.
type FinishPartialInput struct {
	PublishInput
	// Started is when the partial full backup started (the workflow's
	// time), the key of its record in the index.
	Started time.Time
}

// FinishPartialResult is the finished partial snapshot and its record.
type FinishPartialResult struct {
	SnapshotID string
	Dir        string
	// Redump is what the index records of the re-dump (status shows the
	// last one).
	Redump index.Redump
}

// RemovePartialInput names a partial snapshot of a source.
type RemovePartialInput struct {
	Source     string
	SnapshotID string
}

// PublisherInput names a source.
type PublisherInput struct {
	Source string
}

// PublisherResult is the worker that published the source's latest
// snapshot: its host and the recreate token of the session it ran in; both
// empty when none is recorded or the worker has no remote store.
type PublisherResult struct {
	Host  string `json:",omitempty"`
	Token []byte `json:",omitempty"`
}

// RecordPublisherInput is the worker that just published a snapshot of
// Source.
type RecordPublisherInput struct {
	Source string
	Host   string
	Token  []byte
}

// LinkTablesInput names the tables of a refresh whose plan is link (no
// change in the window): each is RefreshTable's input for that table.
type LinkTablesInput struct {
	Tables []RefreshTableInput
}

// LinkTablesResult is each linked table's result, in the input's order.
type LinkTablesResult struct {
	Tables []ConvertTableResult
}

// Digest is the file's size and sha256.
func (f ChainFile) Digest() digest.Digest { return digest.Digest{SHA256: f.SHA256, Size: f.Size} }

// DiscardUnpublishedInput names the snapshot of a failed spread refresh.
type DiscardUnpublishedInput struct {
	Source     string
	SnapshotID string
}

// PlanRefreshInput asks for the plan of a source's next refresh.
type PlanRefreshInput struct {
	Source string
	// TableDeltas off rewrites every changed table in full.
	TableDeltas bool
	// MaxChainAge ends a chain this old (0: foldplan.DefaultMaxChainAge).
	MaxChainAge time.Duration
	// Redumped is the partial snapshot a partial full backup wrote for this
	// refresh ("" for none): its tables are planned from it
	// (foldplan.Input.Redumped).
	Redumped string `json:",omitempty"`
}

// PlanRefreshResult is the plan with what the workflow needs to run it.
type PlanRefreshResult struct {
	// Prev is the current snapshot the refresh folds from ("" when there is
	// none: the plan is refused).
	Prev    string
	PrevSeq uint64
	// Cut is the capture checkpoint at the start: the new snapshot's position.
	Cut  binlogpos.Position
	Plan foldplan.Plan
	// DumpConfigured: a refused refresh can run a full backup instead.
	DumpConfigured bool
	// CreateTables is the CREATE TABLE at the cut of every table whose
	// definition a schema change in the window moved (a rewrite through a
	// lineage, a re-dump, DefinitionMoved), by schema.table: the source's
	// SHOW CREATE TABLE when it still describes the definition at the cut,
	// else one rendered from the definition (CreateTableSource says which).
	CreateTables      map[string]string `json:",omitempty"`
	CreateTableSource map[string]string `json:",omitempty"`
}

// RefreshTableInput executes one table's plan into a staged snapshot. It
// carries no retention policy: a table short of room runs the worker's
// (activities.Activities.Retention); the Retention field of inputs recorded before
// the policy moved to the worker decodes and is ignored.
type RefreshTableInput struct {
	Source     string
	SnapshotID string
	Prev       string
	PrevSeq    uint64
	Cut        binlogpos.Position
	Table      foldplan.TablePlan
	// Shared: the table runs on a worker other than the one that stages
	// the snapshot (the workflow placed it on that worker's own queue). It
	// reads the previous snapshot's files of the table from the remote
	// store and puts the files it writes there, at their final names; the
	// stager adopts them (AdoptTable). Only pair and rewrite tables without
	// a compacted range are shared.
	Shared bool `json:",omitempty"`
	// CreateTable is the table's CREATE TABLE at the cut when a schema
	// change in the window moved its definition (PlanRefreshResult.CreateTables);
	// "" keeps the one its files carry.
	CreateTable string `json:",omitempty"`
}

// RefreshWorkersInput asks which workers can fold tables of a refresh
// whose previous snapshot is Prev, staged on the worker that runs the
// activity. TaskQueue is the refresh's task queue.
type RefreshWorkersInput struct {
	Source    string
	Prev      string
	TaskQueue string
}

// RefreshWorkersResult names the own queue (activities.WorkerQueue) of the worker
// that ran RefreshWorkers (Self) and of every other live worker (Others).
// Others is empty, with the Reason, when tables cannot be shared: no remote
// store, the previous snapshot not confirmed on it, no queue of its own.
type RefreshWorkersResult struct {
	Self   string   `json:",omitempty"`
	Others []string `json:",omitempty"`
	Reason string   `json:",omitempty"`
}

// AdoptTableInput brings into the staged snapshot SnapshotID the files a
// shared RefreshTable (Result) wrote for Table on another worker: the
// plan's links from Prev, and the written files fetched from the store.
type AdoptTableInput struct {
	Source     string
	SnapshotID string
	Prev       string
	Table      foldplan.TablePlan
	Result     ConvertTableResult
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
	// Space is the range's estimate (the merged files) and the bytes of the
	// range pair written (nil when nothing was written).
	Space *spaceneed.Step `json:"Room,omitempty"`
}

// PruneInput applies the worker's retention policy (activities.Activities.Retention)
// to a source's local snapshots and drops the .compact/ ranges of the
// tables named (used or stale after a refresh). It carries no policy:
// the Keep, KeepDays and ArchiveKeepDays of inputs recorded before the
// policy moved to the worker decode and are ignored.
type PruneInput struct {
	Source        string
	DropCompacted []foldplan.TableKey
}

// PruneResult lists the removed snapshots, and those retention would have
// removed but kept because their remote copy is not confirmed yet.
type PruneResult struct {
	Removed []string
	Held    []string `json:",omitempty"`
}
