package activities

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
)

// DefaultIndexHours is how many hours of events the index keeps before the
// archive workflow moves them to object storage (--index-hours).
const DefaultIndexHours = 24

// PlanArchiveInput asks which hours of a source are due for archiving at
// Now (the workflow's time): those that ended IndexHours or more before it.
type PlanArchiveInput struct {
	Source     string
	IndexHours int
	Now        time.Time
}

// PlanArchiveResult lists the hours due, oldest first. Location is the
// worker's archive location; "" means it has none, and nothing is archived
// or dropped (Reason says so).
type PlanArchiveResult struct {
	Location string
	// Before is the start of the oldest hour the index keeps: every hour
	// before it is due.
	Before time.Time
	Hours  []ArchiveHourPlan
	Reason string `json:",omitempty"`
}

// ArchiveHourPlan is one hour due, with its event count at planning time.
type ArchiveHourPlan struct {
	Hour   time.Time
	Events int64
}

// ArchiveHistoryInput asks for the source's history file.
type ArchiveHistoryInput struct {
	Source string
}

// ArchiveHistoryResult is the history file written.
type ArchiveHistoryResult struct {
	Object                string
	Bytes                 int64
	Schemas, Gaps, Starts int
}

// ArchiveHourInput names one hour of a source to archive.
type ArchiveHourInput struct {
	Source string
	Hour   time.Time
}

// ArchiveHourResult is what archiving one hour did.
type ArchiveHourResult struct {
	Hour   time.Time
	Object string
	// Events is the file's event count; IndexEvents how many of them came
	// from the index in this run (the others were in the stored file of an
	// earlier run: events that landed in the hour after it was archived).
	Events, IndexEvents int64
	Bytes               int64
	SHA256              string
	// Partition is the partition dropped; Deleted the chunk rows deleted
	// instead (see index.DropResult). Kept says why the hour's events are
	// still in the index ("" once they are gone).
	Partition string `json:",omitempty"`
	Deleted   int64  `json:",omitempty"`
	Kept      string `json:",omitempty"`
	// Rounds is how often the hour was written: more than once when events
	// landed in it while it was being archived.
	Rounds int
}

// ArchiveProgress is ArchiveHour's heartbeat: the hour, the step (write,
// record, upload, confirm, drop) and the events written so far.
type ArchiveProgress struct {
	Hour   time.Time
	Step   string
	Events int64
}

// DropEmptyPartitionsInput asks to drop the index's empty hourly
// partitions of hours before Before.
type DropEmptyPartitionsInput struct {
	Before time.Time
}

// DropEmptyPartitionsResult names the partitions dropped.
type DropEmptyPartitionsResult struct {
	Dropped []string
}

// PrepareRestoreInput starts the restore of a source's index from the
// archives at ArchiveURL ("" : the worker's archive location).
type PrepareRestoreInput struct {
	Source     string
	ArchiveURL string
}

// PrepareRestoreResult lists the archive files to restore, oldest hour
// first. Resumed is set when an unfinished restore goes on.
type PrepareRestoreResult struct {
	Location string
	Hours    []RestoreHourPlan
	Resumed  bool
}

// RestoreHourPlan is one archive file to restore.
type RestoreHourPlan struct {
	Hour   time.Time
	Object string
	Size   int64
}

// RestoreHourInput names one archive file to restore.
type RestoreHourInput struct {
	Source     string
	ArchiveURL string
	Hour       time.Time
	Object     string
}

// RestoreHourResult is what one hour's restore stored; Done is false when
// an earlier attempt or run had restored it.
type RestoreHourResult struct {
	Hour              time.Time
	Events            int64
	FirstSeq, LastSeq uint64
	Done              bool
}

// RestoreProgress is RestoreHour's heartbeat.
type RestoreProgress struct {
	Hour   time.Time
	Step   string // lease (waiting for the capture lease), download, restore
	Events int64
}

// FinishRestoreInput ends a restore; Failed names the archive files that
// could not be read.
type FinishRestoreInput struct {
	Source     string
	ArchiveURL string
	Failed     []string
}

// FinishRestoreResult is what the index holds after the restore and where
// capture resumes.
type FinishRestoreResult struct {
	Hours             int
	Events            int64
	FirstSeq, LastSeq uint64
	// Resume is the checkpoint written: the end of the last restored
	// transaction.
	Resume binlogpos.Position
	// Gaps are the capture gaps the restore recorded: a purged binlog after
	// the last restored transaction, events in no readable archive.
	Gaps    []string `json:",omitempty"`
	Outcome string
}
