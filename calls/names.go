package calls

import "time"

// The names of the activities, as a worker registers them (the methods of
// activities.Activities) and a workflow schedules them. A workflow names
// an activity by these constants, never by the method, so that the
// workflows do not import the activities (workers.TestActivityNames holds
// the two sets equal).
const (
	AdoptTable            = "AdoptTable"
	AllocateSnapshot      = "AllocateSnapshot"
	ApplyRetention        = "ApplyRetention"
	ArchiveHistory        = "ArchiveHistory"
	ArchiveHour           = "ArchiveHour"
	CompactTable          = "CompactTable"
	ConvertTable          = "ConvertTable"
	DiscardUnpublished    = "DiscardUnpublished"
	DownloadCurrent       = "DownloadCurrent"
	DropEmptyPartitions   = "DropEmptyPartitions"
	Dump                  = "Dump"
	EndRestore            = "EndRestore"
	ExactFloats           = "ExactFloats"
	ExportTable           = "ExportTable"
	FinishExport          = "FinishExport"
	FinishPartial         = "FinishPartial"
	FinishReindex         = "FinishReindex"
	LastPublisher         = "LastPublisher"
	LinkTables            = "LinkTables"
	LoadTable             = "LoadTable"
	MapPosition           = "MapPosition"
	PlanArchive           = "PlanArchive"
	PlanExport            = "PlanExport"
	PlanRefresh           = "PlanRefresh"
	PlanRestore           = "PlanRestore"
	PlanRetention         = "PlanRetention"
	PrepareReindex        = "PrepareReindex"
	Prune                 = "Prune"
	Publish               = "Publish"
	PublishRefresh        = "PublishRefresh"
	RecordDrill           = "RecordDrill"
	RecordPublisher       = "RecordPublisher"
	RefreshTable          = "RefreshTable"
	RefreshWorkers        = "RefreshWorkers"
	ReindexHour           = "ReindexHour"
	RemoveDump            = "RemoveDump"
	RemoveExportStaging   = "RemoveExportStaging"
	RemovePartial         = "RemovePartial"
	RemoveSnapshotStaging = "RemoveSnapshotStaging"
	SweepParts            = "SweepParts"
	SweepStaging          = "SweepStaging"
	UploadSnapshot        = "UploadSnapshot"
	VerifyRestore         = "VerifyRestore"
	VerifySnapshot        = "VerifySnapshot"
	WriteViews            = "WriteViews"
)

// Names lists every activity name above, sorted.
var Names = []string{
	AdoptTable,
	AllocateSnapshot,
	ApplyRetention,
	ArchiveHistory,
	ArchiveHour,
	CompactTable,
	ConvertTable,
	DiscardUnpublished,
	DownloadCurrent,
	DropEmptyPartitions,
	Dump,
	EndRestore,
	ExactFloats,
	ExportTable,
	FinishExport,
	FinishPartial,
	FinishReindex,
	LastPublisher,
	LinkTables,
	LoadTable,
	MapPosition,
	PlanArchive,
	PlanExport,
	PlanRefresh,
	PlanRestore,
	PlanRetention,
	PrepareReindex,
	Prune,
	Publish,
	PublishRefresh,
	RecordDrill,
	RecordPublisher,
	RefreshTable,
	RefreshWorkers,
	ReindexHour,
	RemoveDump,
	RemoveExportStaging,
	RemovePartial,
	RemoveSnapshotStaging,
	SweepParts,
	SweepStaging,
	UploadSnapshot,
	VerifyRestore,
	VerifySnapshot,
	WriteViews,
}

// HeartbeatEvery is how often a running activity heartbeats on its own.
// Workflows give activities a heartbeat timeout of a few times this, so a
// worker that died is noticed in seconds, not at the activity's
// start-to-close timeout.
const HeartbeatEvery = 2 * time.Second

// Renamed maps the names the index rebuild's activities had before issue
// 35 called the rebuild "reindex" to their names now. A worker registers
// each under its old name too, so that a run started before the rename
// (which schedules them by their old names, workflows.reindexNamesChange)
// finishes on a new worker.
var Renamed = map[string]string{
	"PrepareRestore": PrepareReindex,
	"RestoreHour":    ReindexHour,
	"FinishRestore":  FinishReindex,
}
