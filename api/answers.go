package api

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
)

// The answer types of the catalog reads (GET /v1/snapshots, /v1/archives
// and the capture part of /v1/status), here so that every reader of the
// API (`dbtrail snapshots --json`, the console) decodes the same types.

// SnapshotEntry is one published snapshot as GET /v1/snapshots and
// `dbtrail snapshots` show it. Kind and Origin are normalized: an empty
// manifest Kind is "full", an empty table Origin "dump".
type SnapshotEntry struct {
	ID      string `json:"id"`
	Current bool   `json:"current"`
	// Where is local, remote or both (with --archive-url; "" without).
	Where string `json:"where,omitempty"`
	// RemoteCurrent: the remote current pointer names this snapshot.
	RemoteCurrent bool               `json:"remote_current,omitempty"`
	Kind          string             `json:"kind"`
	Prev          string             `json:"prev,omitempty"`
	Position      binlogpos.Position `json:"position"`
	CreatedAt     time.Time          `json:"created_at"`
	Bytes         int64              `json:"bytes"`     // sum of the manifest's file sizes
	NewBytes      int64              `json:"new_bytes"` // of Bytes, files not shared with the previous snapshot
	Tables        []SnapshotTable    `json:"tables"`
}

// SnapshotTable is one table of a SnapshotEntry. Bytes and NewBytes count
// the table file and its chain files.
type SnapshotTable struct {
	Schema   string `json:"schema"`
	Table    string `json:"table"`
	Origin   string `json:"origin"`
	Kind     string `json:"kind"`
	Chain    int    `json:"chain_entries"` // .posdel/.upserts pairs (a range pair counts as one)
	Rows     int64  `json:"rows"`
	NewBytes int64  `json:"new_bytes"`
	Bytes    int64  `json:"bytes"`
}

// ArchivedHour is one archived hour of GET /v1/archives and `dbtrail
// archives`.
type ArchivedHour struct {
	Hour      time.Time `json:"hour"`
	Events    int64     `json:"events"`
	Bytes     int64     `json:"bytes"`
	SHA256    string    `json:"sha256,omitempty"`
	FirstSeq  uint64    `json:"first_seq"`
	LastSeq   uint64    `json:"last_seq"`
	InIndex   int64     `json:"in_index"` // the hour's events the index still holds
	Location  string    `json:"location"`
	Object    string    `json:"object"`
	Confirmed time.Time `json:"confirmed_at"` // zero: not confirmed
	Dropped   time.Time `json:"dropped_at"`   // zero: never left the index
	// Stored is what --archive-url found: "ok" (size and sha256), "size
	// ok" (the store keeps no sha256), "missing", "differs", or "" when not
	// checked; "unrecorded" for a file in the store the index does not
	// know.
	Stored string `json:"stored,omitempty"`
}

// CaptureStatus is the capture part of GET /v1/status.
type CaptureStatus struct {
	Checkpoint *change.Checkpoint `json:"checkpoint,omitempty"`
	// LagSeconds is the time since the last captured commit (absent
	// before the first one).
	LagSeconds *float64 `json:"lag_seconds,omitempty"`
	IndexBytes int64    `json:"index_bytes"`
}

// FileChecks is the answer of GET /v1/snapshots/{id}/check: each file of
// a table of a snapshot, read again and compared with the manifest.
type FileChecks struct {
	Snapshot string      `json:"snapshot"`
	Table    string      `json:"table"`
	Files    []FileCheck `json:"files"`
}

// FileCheck is one file's check: Status is "ok" (size and sha256 as the
// manifest records), "differs" (Detail says how), "missing", or "error"
// (it could not be read: Detail).
type FileCheck struct {
	Path   string `json:"path"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// FolderSpace is one worker folder's free space in GET /v1/status, as the
// worker last measured it.
type FolderSpace struct {
	Worker string `json:"worker"` // the worker's identity (<pid>@<host>)
	Folder string `json:"folder"` // backup, work or dump
	Path   string `json:"path"`
	// Free is the bytes an unprivileged writer could still write; Error is
	// why the folder could not be measured ("" when it was).
	Free  uint64 `json:"free_bytes"`
	Error string `json:"error,omitempty"`
	// MeasuredAt is when the measure reached the index, by its clock.
	MeasuredAt time.Time `json:"measured_at"`
}
