package calls

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// RecordDrillInput is a finished restore drill's record.
type RecordDrillInput struct {
	Drill index.Drill
}

// PlanRestoreInput plans a restore.
type PlanRestoreInput struct{ Spec payload.RestoreSpec }

// PlanRestoreResult is a restore decided before anything is loaded: the
// moment's rebuild plan and one job per table.
type PlanRestoreResult struct {
	RestoreID  string
	TargetAddr string
	Plan       moment.Plan
	Jobs       []RestoreTableJob
}

// RestoreTableJob is one table of a restore: its rebuild at the cut and
// where it goes in the target.
type RestoreTableJob struct {
	RestoreID string
	Table     moment.TablePlan
	Cut       moment.Cut
	// Schema and Name are the target table; Load is the table rows are
	// loaded into (Name, or its --replace twin).
	Schema, Name, Load string
}

// Target is schema.name of the target table.
func (j RestoreTableJob) Target() string { return restore.Job(j).Target() }

// LoadTableInput loads chunks of one table for at most Slice (then it
// returns, and the workflow calls it again): the workflow's progress
// moves at every return, and a killed worker loses at most one slice's
// attempt.
type LoadTableInput struct {
	Spec payload.RestoreSpec
	Job  RestoreTableJob
	// ChunkRows is the chunk size to start with (the previous slice's
	// last); 0 is throttle.FirstChunk.
	ChunkRows int           `json:",omitempty"`
	Slice     time.Duration `json:",omitempty"`
	// Parts is how many key ranges of the table load at once, each on its
	// own connection with its own checkpoint (0 or 1: one), when its load
	// starts; a table of fewer than 2 × activities.Activities.RestorePartRows rows, or without a
	// key, loads as one. A load that started keeps its parts.
	Parts int `json:",omitempty"`
}

// LoadTableResult is where a table's load stands after a slice.
type LoadTableResult struct {
	Rows    int64 // committed rows (the checkpoint)
	Total   int64 // rows of the rebuilt table
	Written int64 // rows this slice committed
	Chunks  int   // chunks this slice committed
	// ChunkRows is the chunk size the next slice starts with.
	ChunkRows int
	// ChunkMillis are the durations of this slice's chunk transactions.
	ChunkMillis []int32 `json:",omitempty"`
	// StageMillis is how long this call took to stage the rebuilt table
	// (0 when it was staged already).
	StageMillis int64 `json:",omitempty"`
	// Paused says why the slice ended waiting ("" when it did not).
	Paused string `json:",omitempty"`
	Done   bool
	// Def is the table's definition at the moment (set when Done): what
	// the verification reads from the target.
	Def         *schema.Table `json:",omitempty"`
	Fingerprint string        `json:",omitempty"`
	// Space is the staging's estimate and the staged files' bytes (nil
	// when the call did not stage: the table was staged already).
	Space *spaceneed.Step `json:"Room,omitempty"`
}

// LoadProgress is LoadTable's heartbeat detail: the stage and its rows
// (restore.Load.Progress) and Loaded, the rows the target held at the
// last report of them (the checkpoint's when the attempt began, then
// after each chunk). A LoadTable whose every attempt lost its worker is
// called again when Loaded moved (workflows: loadLost).
type LoadProgress struct {
	Table  string
	Stage  string
	Rows   int64
	Paused string `json:",omitempty"`
	Loaded int64  `json:",omitempty"`
}

// VerifyRestoreInput fingerprints a loaded table in the target and
// compares it with the rebuilt table's (then swaps it in, under --replace).
type VerifyRestoreInput struct {
	Spec payload.RestoreSpec
	Job  RestoreTableJob
	Def  *schema.Table
}

// VerifyRestoreResult is a verified table.
type VerifyRestoreResult struct {
	Fingerprint string
	Rows        int64
	// Old is the name the replaced table keeps (--replace with an
	// existing table).
	Old string `json:",omitempty"`
}

// EndRestoreInput removes a restore's staged tables from this worker's
// work folder and, for a drill, drops the schemas it created.
type EndRestoreInput struct {
	Spec      payload.RestoreSpec
	RestoreID string
	// DropSchemas are dropped (a drill's scratch schemas), with their rows
	// in the bookkeeping table.
	DropSchemas []string `json:",omitempty"`
}
