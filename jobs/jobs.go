// Package jobs starts, lists, follows and cancels dbtrail's jobs on
// Temporal, under the rules every caller shares (the HTTP API of package
// api, the CLI verbs and `dbtrail jobs`):
//
//   - a job is a workflow; its workflow ID is the job ID, "<source>:<label>";
//   - every job has a label, unique per source (given, or made from the
//     kind and the time): a second start with a label in use is refused
//     with the existing job's ID (Temporal's REJECT_DUPLICATE reuse policy
//     on the ID, so the refusal holds as long as the namespace keeps the
//     closed run: its retention);
//   - one job per source and kind at a time: a start while one runs is
//     refused with the running job's ID; restores into one target are one
//     at a time too.
//
// The source, label and restore target travel as search attributes
// (AttrSource, AttrLabel, AttrTarget), so the visibility API lists and
// filters jobs. Starts set WorkflowExecutionErrorWhenAlreadyStarted.
package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kind is what a job does. Each kind is one workflow type.
type Kind string

// The kinds a caller starts, and the ones schedules start.
const (
	Backup    Kind = "backup"
	Refresh   Kind = "refresh"
	Export    Kind = "export"
	Verify    Kind = "verify"
	Restore   Kind = "restore"
	Retention Kind = "retention"
	Archive   Kind = "archive"
	Compact   Kind = "compact"
	Reindex   Kind = "reindex"
)

// kindAliases are the names kinds had before (accepted by ParseKind):
// "restore-index" was the index rebuild's before issue 35.
var kindAliases = map[string]Kind{"restore-index": Reindex}

// Kinds lists every kind, in the order the API documents them.
func Kinds() []Kind {
	return []Kind{Backup, Refresh, Export, Verify, Restore, Retention, Archive, Compact, Reindex}
}

// Workflow returns the registered workflow type name of kind, or "" for an
// unknown kind. "Restore" is the type a restore starts; its workflow is
// registered by whoever implements it.
func (k Kind) Workflow() string {
	switch k {
	case Backup:
		return "FullBackup"
	case Refresh:
		return "Refresh"
	case Export:
		return "Export"
	case Verify:
		return "Verify"
	case Restore:
		return "Restore"
	case Retention:
		return "Retention"
	case Archive:
		return "Archive"
	case Compact:
		return "Compact"
	case Reindex:
		return "Reindex"
	}
	return ""
}

// Workflows are the workflow types whose runs are jobs of kind: its
// Workflow, and for Reindex also the type its runs had before issue 35,
// RestoreIndex (registered as an alias of the same workflow).
func (k Kind) Workflows() []string {
	if k == Reindex {
		return []string{k.Workflow(), "RestoreIndex"}
	}
	if w := k.Workflow(); w != "" {
		return []string{w}
	}
	return nil
}

// KindOf returns the kind whose workflow type is workflowType ("" for a
// workflow that is not a dbtrail job).
func KindOf(workflowType string) Kind {
	for _, k := range Kinds() {
		if slices.Contains(k.Workflows(), workflowType) {
			return k
		}
	}
	return ""
}

// ParseKind returns the kind named s, or an error naming the kinds.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if a, ok := kindAliases[s]; ok {
		k = a
	}
	if k.Workflow() == "" {
		return "", fmt.Errorf("unknown kind %q: want one of %v", s, Kinds())
	}
	return k, nil
}

// State is a job's state, from its workflow's execution status.
type State string

// The states of a job.
const (
	Running    State = "running"
	Completed  State = "completed"
	Failed     State = "failed"
	Canceled   State = "canceled"
	Terminated State = "terminated"
	TimedOut   State = "timed_out"
	// ContinuedAsNew: the run handed over to a new run under the same ID.
	ContinuedAsNew State = "continued_as_new"
)

// States lists every state.
func States() []State {
	return []State{Running, Completed, Failed, Canceled, Terminated, TimedOut, ContinuedAsNew}
}

// visibilityStatus is the ExecutionStatus value of state in a visibility
// query.
func (s State) visibilityStatus() string {
	switch s {
	case Running:
		return "Running"
	case Completed:
		return "Completed"
	case Failed:
		return "Failed"
	case Canceled:
		return "Canceled"
	case Terminated:
		return "Terminated"
	case TimedOut:
		return "TimedOut"
	case ContinuedAsNew:
		return "ContinuedAsNew"
	}
	return ""
}

// ParseState returns the state named s, or an error naming the states.
func ParseState(s string) (State, error) {
	st := State(s)
	if st.visibilityStatus() == "" {
		return "", fmt.Errorf("unknown state %q: want one of %v", s, States())
	}
	return st, nil
}

// Job is one job as callers see it.
type Job struct {
	ID       string `json:"id"`
	RunID    string `json:"run_id"`
	Kind     Kind   `json:"kind,omitempty"`
	Workflow string `json:"workflow"`
	Source   string `json:"source,omitempty"`
	Label    string `json:"label,omitempty"`
	Target   string `json:"target,omitempty"`
	State    State  `json:"state"`
	// StartedBy is who started the job: StartedBySchedule, StartedByAPI,
	// StartedByCLI, or empty when unknown.
	StartedBy string `json:"started_by,omitempty"`
	// Followed is set on the job a start returned instead of starting one:
	// a job of its kind was running (Request.Follow).
	Followed bool `json:"followed,omitempty"`
	// URL is the run's page in the Temporal UI ("" without a UI address).
	URL       string     `json:"url,omitempty"`
	StartedAt time.Time  `json:"started_at"`
	ClosedAt  *time.Time `json:"closed_at,omitempty"`
	// Progress is the answer of the workflow's progress query (running
	// jobs; absent when no worker answered in time).
	Progress json.RawMessage `json:"progress,omitempty"`
	// Retrying are the steps of a running job that failed and are retried
	// (Get only); a step leaves the list when it succeeds.
	Retrying []Retry `json:"retrying,omitempty"`
	// Result is the workflow's result (completed jobs, Get only).
	Result json.RawMessage `json:"result,omitempty"`
	// Error is why a job that did not complete ended: its root cause.
	Error string `json:"error,omitempty"`
}

// namePattern is what a source name and a label may hold: letters, digits,
// '_', '.', '-', starting with a letter or digit, at most 64 characters. No
// ':' (the job ID's separator), no '/' (a folder name), no quote (a
// visibility query's literal).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CheckName returns an error naming what when name is not a valid source
// name or label.
func CheckName(what, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%s %q: want 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", what, name)
	}
	return nil
}

// RestoreLock names where a restore writes, for "one restore per target
// at a time": the target (its name, or an ad-hoc target's address) and the
// schema restored into (into, else the schemas selected when no table
// is, else every schema: "all").
//
// It is spelt as a job name (CheckName): other characters become '-',
// and a name longer than 64 keeps its start and a digest of the whole.
func RestoreLock(target, into string, schemas, tables []string) string {
	schema := "all"
	switch {
	case into != "":
		schema = into
	case len(schemas) > 0 && len(tables) == 0:
		schema = strings.Join(schemas, ".")
	}
	name := strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, target+"."+schema)
	if len(name) > 64 {
		sum := sha256.Sum256([]byte(name))
		name = name[:47] + "-" + hex.EncodeToString(sum[:8])
	}
	return name
}

// ID is the job ID of the job labelled label of source.
func ID(source, label string) string { return source + ":" + label }

// DefaultLabel is the label of a job started at now without one: its kind
// and the UTC time to the millisecond, e.g. "backup-20260505T201500.250Z"
// (two jobs of a kind run one after the other, never within the same
// millisecond).
func DefaultLabel(kind Kind, now time.Time) string {
	return string(kind) + "-" + now.UTC().Format("20060102T150405.000Z")
}

// Conflict reasons of ConflictError.
const (
	// ConflictLabel: the label is taken by JobID.
	ConflictLabel = "label"
	// ConflictRunning: JobID of the same source and kind (or the same
	// restore target) is running.
	ConflictRunning = "running"
)

// ConflictError is Start's refusal: the label is in use or a job of the
// same source and kind is running. JobID names the existing job.
type ConflictError struct {
	Reason  string
	JobID   string
	Message string
}

func (e *ConflictError) Error() string { return e.Message }

// ErrNotFound is matched (errors.Is) by the error of Get and Cancel for a
// job ID Temporal does not know.
var ErrNotFound = errors.New("job not found")

// ErrClosed is matched by Cancel's error for a job that is no longer
// running.
var ErrClosed = errors.New("job is not running")
