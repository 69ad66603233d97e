package activities

import (
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/payload"
)

// nonRetryable wraps err as a non-retryable application error of type kind,
// its message err's.
func nonRetryable(kind string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), kind, err)
}

// badInput marks an error a retry cannot cure (a malformed dump, a value
// that cannot be stored).
func badInput(err error) error { return nonRetryable(payload.ErrBadInput, err) }

// ErrCaptureRunning: reindex while capture of the source holds its
// lease on the index.
const ErrCaptureRunning = "CaptureRunning"
