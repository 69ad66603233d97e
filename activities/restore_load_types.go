package activities

import (
	"encoding/json"
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/room"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Types of the Restore workflow's non-retryable errors (restore.Kind…:
// the domain's kinds, passed on by restoreErr).
const (
	ErrTargetUnreachable  = restore.KindTargetUnreachable
	ErrTargetNotEmpty     = restore.KindTargetNotEmpty
	ErrMissingPrivilege   = restore.KindMissingPrivilege
	ErrCheckpointConflict = restore.KindCheckpointConflict
	ErrRestoreMismatch    = restore.KindRestoreMismatch
	ErrTargetRefused      = restore.KindTargetRefused
)

// DefaultLoadSlice is how long one LoadTable call loads.
const DefaultLoadSlice = restore.DefaultLoadSlice

// DefaultRestorePartRows is the fewest rows a part of a restored table
// loads (Activities.RestorePartRows).
const DefaultRestorePartRows = restore.DefaultPartRows

// Endpoint is a server an ad-hoc restore connects to (TargetRef.AdHoc, a
// replica of it): a go-sql-driver DSN that carries no password, and the
// file on the worker's machine that holds it (the password never travels
// in a workflow's history). A worker takes one only where its operator
// allows ad-hoc targets, and the file only from its secrets folder.
type Endpoint struct {
	DSN          string
	PasswordFile string `json:",omitempty"`
}

// TargetRef is the server a restore writes into: the name of a restore
// target the worker's operator configured (package target), or, only on a
// worker that allows ad-hoc targets (Activities.AdHocTargets), an endpoint
// that `dbtrail restore --target-dsn` on the worker's machine passed. It
// is a JSON string (the name) or an object (the endpoint; the form every
// restore had before targets were named, so older histories still decode).
type TargetRef struct {
	Name  string
	AdHoc *Endpoint
}

// MarshalJSON writes the name as a JSON string, an ad-hoc endpoint as an
// object.
func (r TargetRef) MarshalJSON() ([]byte, error) {
	if r.AdHoc != nil {
		return json.Marshal(r.AdHoc)
	}
	return json.Marshal(r.Name)
}

// UnmarshalJSON reads either form (null: none).
func (r *TargetRef) UnmarshalJSON(b []byte) error {
	*r = TargetRef{}
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &r.Name)
	}
	r.AdHoc = new(Endpoint)
	return json.Unmarshal(b, r.AdHoc)
}

// String names the target in messages: its name, or "ad-hoc DSN".
func (r TargetRef) String() string {
	if r.AdHoc != nil {
		return "ad-hoc " + r.AdHoc.DSN
	}
	return r.Name
}

// RestoreSpec is what a restore loads and how: the source's tables at At,
// into Target, throttled by Limits (and the target's replicas and
// throttle query).
type RestoreSpec struct {
	Source  string
	At      string
	Schemas []string `json:",omitempty"`
	Tables  []string `json:",omitempty"`
	Target  TargetRef
	// Replicas are an ad-hoc target's replicas whose lag pauses the load;
	// a named target's are its configuration (refused here).
	Replicas []Endpoint `json:",omitempty"`
	// IntoSchema is the schema the tables go into ({schema} stands for the
	// source table's schema); empty: the source table's own schema.
	IntoSchema string `json:",omitempty"`
	// Replace loads into a twin table and swaps it with an existing one
	// after it is verified.
	Replace bool `json:",omitempty"`
	// CheckpointSchema holds the bookkeeping table (default "dbtrail").
	CheckpointSchema string `json:",omitempty"`
	// NoBinlog loads with sql_log_bin=0.
	NoBinlog bool           `json:",omitempty"`
	Limits   restore.Limits `json:",omitzero"`
	// ThrottleQuery is an ad-hoc target's throttle query; a named
	// target's is its configuration (refused here).
	ThrottleQuery string `json:",omitempty"`
	// Drill restores into new schemas that the workflow drops at the end.
	Drill bool `json:",omitempty"`
}

// Mode is the spec's restore mode (restore.ModeNew or ModeReplace).
func (s RestoreSpec) Mode() string { return s.options().Mode() }

// options are the spec's load options for package restore.
func (s RestoreSpec) options() restore.Options {
	return restore.Options{Source: s.Source, At: s.At, IntoSchema: s.IntoSchema, Replace: s.Replace, Drill: s.Drill,
		NoBinlog: s.NoBinlog, CheckpointSchema: s.CheckpointSchema, Limits: s.Limits}
}

// PlanRestoreInput plans a restore.
type PlanRestoreInput struct{ Spec RestoreSpec }

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

// tableJobs are jobs as the workflow's payloads.
func tableJobs(jobs []restore.Job) []RestoreTableJob {
	out := make([]RestoreTableJob, len(jobs))
	for i, j := range jobs {
		out[i] = RestoreTableJob(j)
	}
	return out
}

// LoadTableInput loads chunks of one table for at most Slice (then it
// returns, and the workflow calls it again): the workflow's progress
// moves at every return, and a killed worker loses at most one slice's
// attempt.
type LoadTableInput struct {
	Spec RestoreSpec
	Job  RestoreTableJob
	// ChunkRows is the chunk size to start with (the previous slice's
	// last); 0 is restore.FirstChunk.
	ChunkRows int           `json:",omitempty"`
	Slice     time.Duration `json:",omitempty"`
	// Parts is how many key ranges of the table load at once, each on its
	// own connection with its own checkpoint (0 or 1: one), when its load
	// starts; a table of fewer than 2 × Activities.RestorePartRows rows, or without a
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
	// Room is the staging's estimate and the staged files' bytes (nil
	// when the call did not stage: the table was staged already).
	Room *room.Step `json:",omitempty"`
}

// LoadProgress is LoadTable's heartbeat detail.
type LoadProgress struct {
	Table  string
	Stage  string
	Rows   int64
	Paused string `json:",omitempty"`
}

// VerifyRestoreInput fingerprints a loaded table in the target and
// compares it with the rebuilt table's (then swaps it in, under --replace).
type VerifyRestoreInput struct {
	Spec RestoreSpec
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
	Spec      RestoreSpec
	RestoreID string
	// DropSchemas are dropped (a drill's scratch schemas), with their rows
	// in the bookkeeping table.
	DropSchemas []string `json:",omitempty"`
}
