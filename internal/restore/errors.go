package restore

import "errors"

// Kinds of the refusals and failures a retry cannot cure. The values are
// the types of the Restore workflow's non-retryable errors: an activity
// passes Kind on (KindOf) and never the message's words.
const (
	// KindTargetUnreachable: the target (or a replica) cannot be connected to.
	KindTargetUnreachable = "TargetUnreachable"
	// KindTargetNotEmpty: a target table exists and holds rows, and neither
	// --replace nor --into-schema was given (or the --replace twin does).
	KindTargetNotEmpty = "TargetNotEmpty"
	// KindMissingPrivilege: the target user lacks a privilege the restore
	// needs; the message names it and where.
	KindMissingPrivilege = "MissingPrivilege"
	// KindCheckpointConflict: the bookkeeping table disagrees with the load
	// (another loader moved a checkpoint, or it is of other staged rows).
	KindCheckpointConflict = "CheckpointConflict"
	// KindRestoreMismatch: a restored table's fingerprint differs from the
	// rebuilt table's.
	KindRestoreMismatch = "RestoreMismatch"
	// KindTargetRefused: the restore names a target this worker does not
	// know or may not write; nothing connected to it or nothing was written.
	KindTargetRefused = "TargetRefused"
	// KindBadInput: the input itself is wrong (a key that cannot order the
	// rows, a value its column cannot hold, a throttle query's answer).
	KindBadInput = "BadInput"
	// KindBadPlan: a step asks for what cannot be done yet (a bug).
	KindBadPlan = "BadPlan"
)

// Error is a failure of kind Kind (one of the Kind constants) that a
// retry cannot cure; its message is Err's.
type Error struct {
	Kind string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// fail marks err as of kind.
func fail(kind string, err error) error { return &Error{Kind: kind, Err: err} }

// KindOf is the kind of err (an *Error in its chain), "" for an error a
// retry may cure.
func KindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// stagedErr classifies the errors of a staged table (Staged): a key that
// cannot order the rows is bad input, a key text that cannot be read back
// a checkpoint of another table; both are never retried.
func stagedErr(err error) error {
	switch {
	case errors.Is(err, ErrKeyDef):
		return fail(KindBadInput, err)
	case errors.Is(err, ErrKeyText):
		return fail(KindCheckpointConflict, err)
	}
	return err
}

// StagedErr is stagedErr for the staging of a table outside this package.
func StagedErr(err error) error { return stagedErr(err) }
