package calls

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
)

// PrepareReindexInput starts the restore of a source's index from the
// archives at ArchiveURL ("" : the worker's archive location).
type PrepareReindexInput struct {
	Source     string
	ArchiveURL string
}

// PrepareReindexResult lists the archive files to restore, oldest hour
// first. Resumed is set when an unfinished restore goes on.
type PrepareReindexResult struct {
	Location string
	Hours    []ReindexHourPlan
	Resumed  bool
}

// ReindexHourPlan is one archive file to restore.
type ReindexHourPlan struct {
	Hour   time.Time
	Object string
	Size   int64
}

// ReindexHourInput names one archive file to restore.
type ReindexHourInput struct {
	Source     string
	ArchiveURL string
	Hour       time.Time
	Object     string
}

// ReindexHourResult is what one hour's restore stored; Done is false when
// an earlier attempt or run had restored it.
type ReindexHourResult struct {
	Hour              time.Time
	Events            int64
	FirstSeq, LastSeq uint64
	Done              bool
}

// ReindexHourProgress is ReindexHour's heartbeat.
type ReindexHourProgress struct {
	Hour   time.Time
	Step   string // lease (waiting for the capture lease), download, restore
	Events int64
}

// FinishReindexInput ends a restore; Failed names the archive files that
// could not be read.
type FinishReindexInput struct {
	Source     string
	ArchiveURL string
	Failed     []string
}

// FinishReindexResult is what the index holds after the restore and where
// capture resumes.
type FinishReindexResult struct {
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
