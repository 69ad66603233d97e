package payload

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"time"
)

// ArchiveWorkflowID is the fixed id of a source's archive schedule; its
// runs get this id with the scheduled time appended, and the schedule's
// overlap policy keeps one open at a time.
func ArchiveWorkflowID(source string) string { return "archive-" + source }

// DefaultArchiveEvery is the interval of a source's archive schedule.
const DefaultArchiveEvery = time.Hour

// ArchiveInput names the source and how many hours the index keeps.
type ArchiveInput struct {
	Source string
	// IndexHours: hours that ended more recently stay in the index
	// (default activities.DefaultIndexHours).
	IndexHours int
}

// ArchiveProgress is what the "progress" query of an archive run returns.
type ArchiveProgress struct {
	Phase      string
	HoursTotal int
	HoursDone  int
	Events     int64
}

// ExportWorkflowID is the id of an export of source to out: one run at a
// time per output (a second `dbtrail export` to the same path is refused
// while the first runs).
func ExportWorkflowID(source, out string) string {
	h := sha256.Sum256([]byte(filepath.Clean(out)))
	return "export-" + source + "-" + hex.EncodeToString(h[:6])
}

// ExportInput is an export: ExportSpec plus how many tables are
// written at once (default 2).
type ExportInput struct {
	ExportSpec
	Parallel int
}

// ExportProgress is what the "progress" query of an export returns.
type ExportProgress struct {
	Phase       string
	TablesTotal int
	TablesDone  int
	Rows        int64
}

// TaskQueue is the queue every dbtrail worker listens on.
const TaskQueue = "dbtrail"

// FullBackupWorkflowID is the fixed id of a source's full backup: Temporal
// refuses a second one while the first runs.
func FullBackupWorkflowID(source string) string { return "fullbackup-" + source }

// FullBackupInput names the source to back up.
type FullBackupInput struct {
	Source string
	// Parallel bounds how many tables are converted at once (default 2).
	Parallel int
	// Tables, when not empty, makes the run a partial full backup of
	// these tables only ("schema.table"; run it under RedumpWorkflowID):
	// its snapshot is finished as a partial snapshot, never current, never
	// uploaded (fullbackup_partial.go).
	Tables []string `json:",omitempty"`
	// PreferHost is the recreate token of a session whose worker a partial
	// full backup asks for first (a refresh's, so that the partial snapshot
	// lands in the backup folder the refresh folds in); nil: any worker.
	PreferHost []byte `json:",omitempty"`
}

// FullBackupProgress is what the "progress" query returns.
type FullBackupProgress struct {
	Phase       string
	TablesTotal int
	TablesDone  int
	Rows        int64
}

// ProgressQuery is the query name workflows answer with their progress.
const ProgressQuery = "progress"

// RedumpWorkflowID is the id of a source's partial full backup: apart from
// FullBackupWorkflowID, so a partial one never waits for, or blocks, a
// full one.
func RedumpWorkflowID(source string) string { return "redump-" + source }

// RefreshWorkflowID is the fixed id of a source's `dbtrail refresh`
// (scheduled runs get the schedule's id with a time suffix; the publish step
// refuses a refresh whose previous snapshot is no longer current, so two
// refreshes can never publish over each other).
func RefreshWorkflowID(source string) string { return "refresh-" + source }

// CompactWorkflowID is the fixed id of a source's compaction.
func CompactWorkflowID(source string) string { return "compact-" + source }

// DefaultRefreshEvery is the interval of a source's refresh schedule.
const DefaultRefreshEvery = 5 * time.Minute

// RefreshInput names the source and the refresh settings.
type RefreshInput struct {
	Source string
	// TableDeltas: false rewrites every changed table in full. The CLI and
	// the schedule default it to true.
	TableDeltas bool
	MaxChainAge time.Duration // 0: foldplan.DefaultMaxChainAge
	Parallel    int           // tables refreshed at once (default 2)
	// The refresh carries no retention policy: its prune applies the
	// worker's (activities.Activities.Retention, docs/retention.md). The
	// Keep, KeepDays and ArchiveKeepDays of inputs recorded before the
	// policy moved to the worker decode and are ignored.
	//
	// NoFullBackup: a refused refresh only reports its reasons.
	NoFullBackup bool
}

// RefreshProgress is what the "progress" query of a refresh returns.
type RefreshProgress struct {
	Phase       string
	TablesTotal int
	TablesDone  int
}

// ReindexWorkflowID is the fixed id of a source's reindex: one at a time.
// It keeps its value from before issue 35 named the rebuild "reindex", so
// that a run started under the old name still holds off a new one.
func ReindexWorkflowID(source string) string { return "restore-index-" + source }

// ReindexInput names the source and where its archives are ("": the
// worker's archive location).
type ReindexInput struct {
	Source     string
	ArchiveURL string
}

// ReindexProgress is what the "progress" query of a reindex returns.
type ReindexProgress struct {
	Phase      string
	HoursTotal int
	HoursDone  int
	Events     int64
}

// RestoreWorkflowID is the id of a restore of spec into target address
// addr: one run at a time per source, target, moment, tables and mode (a
// second `dbtrail restore` of the same is refused while the first runs; a
// rerun after it goes on from its checkpoints).
func RestoreWorkflowID(spec RestoreSpec, addr string) string {
	parts := []string{spec.Source, addr, spec.At, spec.IntoSchema, spec.Mode(), strings.Join(spec.Schemas, ","), strings.Join(spec.Tables, ",")}
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	prefix := "restore-"
	if spec.Drill {
		prefix = "restore-drill-"
	}
	return prefix + spec.Source + "-" + hex.EncodeToString(h[:6])
}

// MaxRestoreParallel bounds RestoreInput.Parallel: a larger value (from
// any caller) loads with this many connections.
const MaxRestoreParallel = 64

// RestoreInput is a restore: RestoreSpec, how many tables load
// at once (default 2, at most MaxRestoreParallel) and how long one
// LoadTable call loads (default activities.DefaultLoadSlice).
type RestoreInput struct {
	RestoreSpec
	Parallel int
	Slice    time.Duration `json:",omitempty"`
}

// Table states in RestoreTableProgress.
const (
	TableWaiting   = "waiting"
	TableLoading   = "loading"
	TableVerifying = "verifying"
	TableVerified  = "verified"
)

// RestoreTableProgress is one table's progress.
type RestoreTableProgress struct {
	Table     string // schema.table at the source
	Target    string // schema.table in the target
	State     string
	Rows      int64
	Total     int64
	ChunkRows int
	// Paused says why the table's load waits ("" while it loads).
	Paused string `json:",omitempty"`
}

// RestoreProgress is what the "progress" query of a restore returns.
type RestoreProgress struct {
	Phase       string
	RestoreID   string
	Cut         string
	Tables      []RestoreTableProgress
	TablesDone  int
	Rows, Total int64
	// Written is the rows this run committed; RowsPerSecond its rate and
	// ETASeconds the time left at that rate (-1 while unknown).
	Written       int64
	RowsPerSecond float64
	ETASeconds    int64
	// Paused is the first paused table's reason.
	Paused string `json:",omitempty"`
}

// DrillWorkflowID is the schedule id of a source's scheduled restore
// drill (--drill-every).
func DrillWorkflowID(source string) string { return "restore-drill-" + source }

// RestoreDrillInput is a drill: the restore (its spec's Drill is set by
// the workflow; At "" is "latest") and the scratch server's address, for
// the record.
type RestoreDrillInput struct {
	Restore    RestoreInput
	TargetAddr string
}

// DefaultRetentionEvery is the interval of a source's retention schedule.
const DefaultRetentionEvery = time.Hour

// RetentionWorkflowID is the schedule id of a source's retention.
func RetentionWorkflowID(source string) string { return "retention-" + source }

// RetentionInput names the source. It carries no policy: the worker's
// (activities.Activities.Retention, docs/retention.md) applies, and the
// plan records it. A Policy field of inputs recorded before the policy
// moved to the worker (schedules made by an older dbtrail) decodes and is
// ignored.
type RetentionInput struct {
	Source string
}

// RetentionProgress is what the "progress" query of a retention run
// returns.
type RetentionProgress struct {
	Phase   string
	Removes int // items the plan removes
}

// DefaultVerifyEvery is the interval of the scheduled verify when a
// worker asks for one without saying (--verify-every).
const DefaultVerifyEvery = 24 * time.Hour

// VerifyWorkflowID is the schedule id of a source's scheduled verify.
func VerifyWorkflowID(source string) string { return "verify-" + source }

// VerifyInput names the source, the snapshot ("current" or "" for the
// current one, else an id) and the tables (schema.table; none: all).
type VerifyInput struct {
	Source   string
	Snapshot string   `json:",omitempty"`
	Tables   []string `json:",omitempty"`
}

// VerifyProgress is what the "progress" query of a verify returns.
type VerifyProgress struct {
	Phase string
}
