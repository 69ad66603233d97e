package activities

import "go.temporal.io/sdk/temporal"

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

// nonRetryable wraps err as a non-retryable application error of type kind,
// its message err's.
func nonRetryable(kind string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), kind, err)
}

// badInput marks an error a retry cannot cure (a malformed dump, a value
// that cannot be stored).
func badInput(err error) error { return nonRetryable(ErrBadInput, err) }

// Types of the archive's and restore-index's non-retryable errors.
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
	// ErrIndexNotEmpty: restore-index into an index that already holds
	// something of the source.
	ErrIndexNotEmpty = "IndexNotEmpty"
	// ErrNoArchives: restore-index found no archive of the source at the
	// location.
	ErrNoArchives = "NoArchives"
	// ErrNoRoom: the folder a step writes to has less free space than the
	// step needs (the message names the folder, the need and what is
	// free); nothing was written.
	ErrNoRoom = "NoRoom"
)

// ErrCaptureRunning: restore-index while capture of the source holds its
// lease on the index.
const ErrCaptureRunning = "CaptureRunning"
