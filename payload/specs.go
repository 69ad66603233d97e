package payload

import (
	"encoding/json"

	"github.com/dbtrail/dbtrail/internal/throttle"
)

// Types of the non-retryable application errors activities return. A
// workflow, the CLI or a test tells them apart with
// temporal.ApplicationError.Type(), never by their message. Every other
// error is retried, up to the workflow's attempt limit.
const (
	// ErrBadInput: the input itself is wrong (a malformed dump, a value its
	// column cannot hold, an event that cannot be folded); the message names
	// file and line, or table, key and position.
	ErrBadInput = "BadInput"
	// ErrBadConfig: the worker's configuration cannot work (a DSN that does
	// not parse).
	ErrBadConfig = "BadConfig"
	// ErrBadDump: mydumper's output is unusable (no metadata, unknown files).
	ErrBadDump = "BadDump"
	// ErrUnknownSource: the source is not configured on this worker.
	ErrUnknownSource = "UnknownSource"
	// ErrPositionNotCovered: the index cannot cover a dump's position
	// (capture started after it, or a capture gap covers it).
	ErrPositionNotCovered = "PositionNotCovered"
	// ErrBadPath: a path outside the folder it must be in.
	ErrBadPath = "BadPath"
	// ErrCurrentMoved: a refresh's previous snapshot is no longer current.
	ErrCurrentMoved = "CurrentMoved"
	// ErrBrokenSnapshot: a published snapshot fails its digests or lacks a
	// file its manifest lists.
	ErrBrokenSnapshot = "BrokenSnapshot"
	// ErrSnapshotGone: the snapshot a step needs was pruned.
	ErrSnapshotGone = "SnapshotGone"
	// ErrBadPlan: a plan asks for an action that cannot be executed (a bug).
	ErrBadPlan = "BadPlan"
	// ErrRemoteConflict: the remote store already holds another snapshot
	// under the id being uploaded; nothing is written over it.
	ErrRemoteConflict = "RemoteConflict"
	// ErrSessionsExhausted: the workers of every session a run opened for
	// its on-host steps died (workflows.MaxSessionAttempts); the message
	// names each lost session and its host.
	ErrSessionsExhausted = "SessionsExhausted"
)

// Types of the archive's and reindex's non-retryable errors.
const (
	// ErrNoArchiveLocation: the worker has no archive location
	// (--archive-url) and none was given.
	ErrNoArchiveLocation = "NoArchiveLocation"
	// ErrBrokenArchive: an archive or history file fails its checks
	// (truncated, altered, of another source or hour); the message names
	// it. Nothing is overwritten or dropped because of it.
	ErrBrokenArchive = "BrokenArchive"
	// ErrArchiveConflict: a stored archive file and the index disagree
	// about an event; the file is not overwritten, the hour not dropped.
	ErrArchiveConflict = "ArchiveConflict"
	// ErrIndexNotEmpty: reindex into an index that already holds
	// something of the source.
	ErrIndexNotEmpty = "IndexNotEmpty"
	// ErrNoArchives: reindex found no archive of the source at the
	// location.
	ErrNoArchives = "NoArchives"
	// ErrNoSpace: the folder a step writes to has less free space than the
	// step needs (the message names the folder, the need and what is
	// free); nothing was written. The value, the type clients and histories
	// read, keeps its first name.
	ErrNoSpace = "NoRoom"
)

// Export formats (ExportInput.Format).
const (
	// ExportSQL: one .sql file of the tables at a moment.
	ExportSQL = "sql"
	// ExportParquet: a folder with one table file per table at a moment.
	ExportParquet = "parquet"
	// ExportChanges: a folder with the changes of a time range, one file per
	// table and shape.
	ExportChanges = "changes"
)

// ExportSpec is what an export writes: the format, the moment (At) or the
// range [From, Until), the tables, and where. Out is a path on the worker's
// machine; nothing appears under it until the export is complete.
type ExportSpec struct {
	Source  string
	Format  string
	At      string   `json:",omitempty"`
	From    string   `json:",omitempty"`
	Until   string   `json:",omitempty"`
	Schemas []string `json:",omitempty"`
	Tables  []string `json:",omitempty"`
	Out     string
	// Views also writes views.sql (DuckDB views over the table files) into
	// a parquet export.
	Views bool `json:",omitempty"`
	// MaxStatementBytes bounds a .sql export's INSERTs (0: the default).
	MaxStatementBytes int `json:",omitempty"`
}

// RefreshProgress is the heartbeat detail of RefreshTable and CompactTable.
type RefreshTableProgress struct {
	Table string
	Stage string
	Rows  int64
}

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
// worker that allows ad-hoc targets (activities.Activities.AdHocTargets), an endpoint
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
	NoBinlog bool            `json:",omitempty"`
	Limits   throttle.Limits `json:",omitzero"`
	// ThrottleQuery is an ad-hoc target's throttle query; a named
	// target's is its configuration (refused here).
	ThrottleQuery string `json:",omitempty"`
	// Drill restores into new schemas that the workflow drops at the end.
	Drill bool `json:",omitempty"`
}

// Mode is the spec's restore mode: "replace" with Replace, else "new"
// (restore.ModeReplace and restore.ModeNew, the load's own rule; a test
// holds the two equal). Its workflow ID hashes it.
func (s RestoreSpec) Mode() string {
	if s.Replace {
		return "replace"
	}
	return "new"
}
