package capture

import (
	"errors"
	"io"
	"net"

	driver "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/index"
)

// Permanent reports whether err stops capture for good: a restart would
// fail the same way until a person acts (a refused source, a schema history
// that disagrees with the binlog, a value that cannot be stored, a gap).
// Lost connections and a lost lease are transient: a restart resumes from
// the checkpoint.
func Permanent(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	var me *driver.MySQLError
	var te *transientError
	switch {
	case errors.As(err, &te):
		return false
	case errors.Is(err, index.ErrLeaseLost),
		errors.Is(err, driver.ErrInvalidConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &ne):
		return false
	case errors.As(err, &me):
		// Deadlocks, lock wait timeouts and server shutdowns of the index.
		switch me.Number {
		case 1205, 1213, 1053, 2006, 2013:
			return false
		}
	}
	return true
}

// transientError marks a failure a restart from the checkpoint can cure,
// such as a binlog stream that broke after go-mysql's own reconnects.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }
