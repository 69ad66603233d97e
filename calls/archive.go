package calls

import (
	"time"
)

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
