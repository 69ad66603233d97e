package activities

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/room"
)

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
// (Activities.Retention); the Retention field of inputs recorded before
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

// RefreshWorkersResult names the own queue (WorkerQueue) of the worker
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
	// Room is the range's estimate (the merged files) and the bytes of the
	// range pair written (nil when nothing was written).
	Room *room.Step `json:",omitempty"`
}

// PruneInput applies the worker's retention policy (Activities.Retention)
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

// UploadSnapshotInput uploads a source's published snapshots up to
// SnapshotID (the one just published) that are not on the remote store yet.
type UploadSnapshotInput struct {
	Source     string
	SnapshotID string
}

// UploadSnapshotResult is what went up: one entry per snapshot uploaded,
// oldest first, and the totals. Location is "" when the worker has no
// remote store (nothing was done).
type UploadSnapshotResult struct {
	Location  string               `json:",omitempty"`
	Snapshots []remote.UploadStats `json:",omitempty"`
	// Current is the snapshot the remote current pointer names after the
	// last upload.
	Current       string `json:",omitempty"`
	FilesUploaded int
	FilesCopied   int
	FilesSkipped  int
	BytesUploaded int64 // read from local files and sent
	BytesCopied   int64 // copied inside the store, not sent
	BytesSkipped  int64 // already on the store
}

// DownloadCurrentInput asks for the remote current snapshot when the source
// folder has none.
type DownloadCurrentInput struct {
	Source string
}

// DownloadCurrentResult names the snapshot downloaded and made current, or
// says why nothing was ("" SnapshotID and a Reason).
type DownloadCurrentResult struct {
	Location   string `json:",omitempty"`
	SnapshotID string `json:",omitempty"`
	Reason     string `json:",omitempty"`
	Stats      remote.DownloadStats
	// Room is the download's estimate (the objects still missing) and the
	// bytes downloaded (nil when nothing was to download).
	Room *room.Step `json:",omitempty"`
}
