package activities

import (
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/payload"
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

// tableJobs are jobs as the workflow's payloads.
func tableJobs(jobs []restore.Job) []calls.RestoreTableJob {
	out := make([]calls.RestoreTableJob, len(jobs))
	for i, j := range jobs {
		out[i] = calls.RestoreTableJob(j)
	}
	return out
}

// restoreOptions are a spec's load options for package restore.
func restoreOptions(s payload.RestoreSpec) restore.Options {
	return restore.Options{Source: s.Source, At: s.At, IntoSchema: s.IntoSchema, Replace: s.Replace, Drill: s.Drill,
		NoBinlog: s.NoBinlog, CheckpointSchema: s.CheckpointSchema, Limits: s.Limits}
}
