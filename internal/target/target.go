// Package target is the restore targets a worker's operator configured:
// the live servers a restore may write into, known by name. A caller (the
// CLI, the API, a schedule, anyone who can start a workflow) names a
// target; only the worker resolves the name to a server, a password file,
// the schemas a restore may write there, whether --replace is allowed, the
// replicas whose lag pauses the load and the throttle query. No caller can
// make a worker connect anywhere else or read any other file.
//
// The package owns the targets file (Load), the rules a restore is held
// to before it writes (Target.CheckSchema, CheckReplace) and the identity
// of a server (Identify, Identity.Same) by which the source can never be a
// target, whatever address names it. The contract: docs/security.md.
package target

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/dsn"
)

// Server is a server as the configuration names it: a DSN without a
// password and the file on the worker's machine that holds the password.
type Server struct {
	DSN          string `json:"dsn"`
	PasswordFile string `json:"password_file,omitempty"`
}

// Target is one restore target.
type Target struct {
	// Name is what callers name it by: 1 to 64 letters, digits, '_', '.'
	// or '-'.
	Name string `json:"name"`
	Server
	// Schemas are the schemas a restore may write into (the tables' and
	// the bookkeeping table's), as patterns of path.Match ('*', '?',
	// '[...]'), compared case-insensitively; none: every schema but the
	// server's own (mysql, sys, information_schema, performance_schema),
	// which no restore ever writes.
	Schemas []string `json:"schemas,omitempty"`
	// Replace allows --replace (a verified twin swapped in for an
	// existing table) on this target.
	Replace bool `json:"replace,omitempty"`
	// IndexServer allows this target to be the server of dbtrail's index
	// (a scratch schema beside it, as the demo's); never the index
	// database itself.
	IndexServer bool `json:"index_server,omitempty"`
	// Replicas are the target's replicas whose lag pauses the load.
	Replicas []Server `json:"replicas,omitempty"`
	// ThrottleQuery runs on the target before each chunk; the load pauses
	// while it returns a value above 0.
	ThrottleQuery string `json:"throttle_query,omitempty"`
}

// namePattern is a target name's spelling (the jobs' name rule).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// systemSchemas are never written by a restore.
var systemSchemas = []string{"mysql", "sys", "information_schema", "performance_schema"}

// Check refuses a target that is not well formed: its name, its DSN and
// its replicas' (dsn.ParseTarget: no password, allowed options only), an
// absolute password file, valid schema patterns.
func (t Target) Check() error {
	if !namePattern.MatchString(t.Name) {
		return fmt.Errorf("restore target %q: want a name of 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", t.Name)
	}
	servers := append([]Server{t.Server}, t.Replicas...)
	for i, s := range servers {
		what := fmt.Sprintf("restore target %s: dsn", t.Name)
		if i > 0 {
			what = fmt.Sprintf("restore target %s: replica %d dsn", t.Name, i)
		}
		if s.DSN == "" {
			return fmt.Errorf("%s is missing", what)
		}
		if _, err := dsn.ParseTarget(what, s.DSN); err != nil {
			return err
		}
		if s.PasswordFile != "" && !path.IsAbs(s.PasswordFile) {
			return fmt.Errorf("%s: password_file %q: want an absolute path", what, s.PasswordFile)
		}
	}
	for _, p := range t.Schemas {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return fmt.Errorf("restore target %s: schema pattern %q is not valid", t.Name, p)
		}
	}
	return nil
}

// CheckSchema refuses a restore writing into schema name on t: a schema
// of the server itself, or one t's Schemas do not match.
func (t Target) CheckSchema(name string) error {
	low := strings.ToLower(name)
	if slices.Contains(systemSchemas, low) {
		return fmt.Errorf("restore target %s: schema %s is the server's own; a restore never writes into it", t.Name, name)
	}
	if len(t.Schemas) == 0 {
		return nil
	}
	for _, p := range t.Schemas {
		if ok, _ := path.Match(strings.ToLower(p), low); ok {
			return nil
		}
	}
	return fmt.Errorf("restore target %s allows the schemas %s; %s is not among them", t.Name, strings.Join(t.Schemas, ", "), name)
}

// CheckReplace refuses --replace on a target that does not allow it.
func (t Target) CheckReplace(replace bool) error {
	if replace && !t.Replace {
		return fmt.Errorf("restore target %s does not allow --replace (its configuration: \"replace\": true)", t.Name)
	}
	return nil
}
