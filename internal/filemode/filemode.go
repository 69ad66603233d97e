// Package filemode is the one rule for the permissions of what dbtrail
// writes under its backup, work, export and data folders: private to the
// user dbtrail runs as (files 0600, folders 0700) by default, or also
// readable by the folders' group (0640/0750) when the operator gives a
// reader group access (--file-mode group, as pgBackRest's repository group
// read). Nothing dbtrail writes is ever readable or writable by others.
//
// Two mechanisms hold the rule together: dbtrail's own writers pass File()
// and Dir() explicitly, and Apply sets the process umask once at the start
// of every command, so what dbtrail does not create itself (DuckDB's COPY
// … TO, mydumper and every other child process, the Temporal server's
// SQLite database) follows too.
package filemode

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
)

// Policy is who may read what dbtrail writes besides its own user.
type Policy int32

const (
	// Private: the owner only (files 0600, folders 0700). The default.
	Private Policy = iota
	// Group: the owner, and the group reads (files 0640, folders 0750).
	Group
)

// Allowed lists the accepted spellings of a policy, for flags' help and
// errors.
const Allowed = "private (0600/0700) or group (0640/0750)"

// Parse reads a policy: "private" or "0600", "group" or "0640". Any other
// value is refused, naming the allowed ones.
func Parse(s string) (Policy, error) {
	switch s {
	case "private", "0600", "600":
		return Private, nil
	case "group", "0640", "640":
		return Group, nil
	}
	return Private, fmt.Errorf("file mode %q: want %s", s, Allowed)
}

// String is the policy's name, as Parse reads it.
func (p Policy) String() string {
	if p == Group {
		return "group"
	}
	return "private"
}

// Set parses s into p (pflag.Value).
func (p *Policy) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Type names the value in flags' help (pflag.Value).
func (p *Policy) Type() string { return "mode" }

// File is the mode of a file under the policy.
func (p Policy) File() os.FileMode {
	if p == Group {
		return 0o640
	}
	return 0o600
}

// Dir is the mode of a folder under the policy.
func (p Policy) Dir() os.FileMode {
	if p == Group {
		return 0o750
	}
	return 0o700
}

// Umask is the process umask that makes what others create follow the
// policy (0o077 or 0o027).
func (p Policy) Umask() int { return int(0o777 &^ p.Dir()) }

// current is the process's policy: Private until Apply says otherwise.
var current atomic.Int32

// Current is the process's policy.
func Current() Policy { return Policy(current.Load()) }

// File is the mode of a file dbtrail writes (Current().File()).
func File() os.FileMode { return Current().File() }

// Dir is the mode of a folder dbtrail creates (Current().Dir()).
func Dir() os.FileMode { return Current().Dir() }

// Apply makes p the process's policy and sets the process umask to match;
// every command calls it once at start, before it creates anything.
func Apply(p Policy) {
	current.Store(int32(p))
	syscall.Umask(p.Umask())
}

// Create creates or truncates the file path with File()'s mode, for
// writers that need no crash safety (scratch files); the rest write
// through internal/atomicfile with File().
func Create(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, File())
}

// CheckPrivate refuses the file at path (what names it in errors, e.g.
// "token file") when its group or world permission bits are set: a file
// of secrets or of what the worker may do is its owner's alone, whatever
// the policy.
func CheckPrivate(path, what string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s %s: mode %v lets others read it; chmod 600 it", what, path, st.Mode().Perm())
	}
	return nil
}

// ReadPrivate reads the file at path after CheckPrivate.
func ReadPrivate(path, what string) ([]byte, error) {
	if err := CheckPrivate(path, what); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}
