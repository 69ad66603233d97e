package calls

import (
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// ExportManifest is export.json: what a folder export holds and the moment
// or range it is of.
type ExportManifest struct {
	Version      int                 `json:"version"`
	Source       string              `json:"source"`
	Format       string              `json:"format"`
	Run          string              `json:"run"`
	At           string              `json:"at,omitempty"`
	Cut          *moment.Cut         `json:"cut,omitempty"`
	BaseSnapshot string              `json:"base_snapshot,omitempty"`
	From         string              `json:"from,omitempty"`
	Until        string              `json:"until,omitempty"`
	Range        *ChangesRange       `json:"range,omitempty"`
	ExportedAt   time.Time           `json:"exported_at"`
	Tables       []ExportTableResult `json:"tables"`
}

// PlanExportInput plans an export into the staging folder Staging (next to
// Out, named after the run: a retry of the run reuses what it finished).
type PlanExportInput struct {
	Spec    payload.ExportSpec
	Staging string
}

// PlanExportResult is the export decided before anything is written: for
// a moment the rebuild plan, for a range its cuts; and one job per table.
type PlanExportResult struct {
	Plan  *moment.Plan       `json:",omitempty"`
	Range *ChangesRange      `json:",omitempty"`
	Jobs  []ExportTableInput `json:",omitempty"`
	// ExportedAt is the export's time, fixed once so that retries write the
	// same footers.
	ExportedAt time.Time
}

// ChangesRange is a range [From, Until) cut: the events After < seq <=
// Upto (moment.Range).
type ChangesRange struct {
	From  moment.Cut
	Until moment.Cut
}

// ExportTableInput writes one table of an export into the staging folder.
type ExportTableInput struct {
	Source  string
	Format  string
	Staging string
	// Table is the table's rebuild (sql, parquet), with the cut.
	Table moment.TablePlan `json:",omitzero"`
	Cut   moment.Cut       `json:",omitzero"`
	// Schema and Name name the table of a changes export, Range its range;
	// Always writes a file even when the table has no change (a table named
	// with --table).
	Schema, Name string           `json:",omitempty"`
	Range        *ChangesRange    `json:",omitempty"`
	Always       bool             `json:",omitempty"`
	ExportedAt   time.Time        `json:",omitzero"`
	Spec         ExportSpecHeader `json:",omitzero"`
	// Need is PlanExport's estimate of the bytes the table's files take
	// (exportNeed); ExportTable checks the output's folder for it first.
	Need uint64 `json:",omitempty"`
}

// ExportSpecHeader is what a table file's footer says about its export:
// the moment or range as the user gave them.
type ExportSpecHeader struct {
	At, From, Until string `json:",omitempty"`
}

// ExportFile is one file an export wrote, relative to the export folder.
type ExportFile struct {
	Path   string `json:"path"`
	Rows   int64  `json:"rows"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ExportTableResult is one table's files.
type ExportTableResult struct {
	Schema string       `json:"schema"`
	Table  string       `json:"table"`
	Files  []ExportFile `json:"files"`
	Rows   int64        `json:"rows"`
	// Events is how many events were folded into the snapshot's table (a
	// moment) or written (a range).
	Events int64 `json:"events"`
	// Reused: the staged files of an earlier attempt were complete.
	Reused bool `json:"reused,omitempty"`
	// Space is the step's estimate and the bytes it wrote (nil when
	// Reused: nothing was written).
	Space *spaceneed.Step `json:"room,omitempty"`
}

// ExportProgress is the heartbeat detail of ExportTable.
type ExportProgress struct {
	Table string
	Stage string
	Rows  int64
}

// FinishExportInput moves a complete export from its staging folder to
// Out: a parquet or changes folder with export.json (renamed into place),
// or the .sql file composed from the staged table files.
type FinishExportInput struct {
	Spec    payload.ExportSpec
	Staging string
	RunID   string
	Plan    PlanExportResult
	Tables  []ExportTableResult
}

// FinishExportResult is the finished export.
type FinishExportResult struct {
	Out   string
	Bytes int64
	// Statements and Oversize describe a .sql export (sqlexport.Stats).
	Statements       int `json:",omitempty"`
	LargestStatement int `json:",omitempty"`
	Oversize         int `json:",omitempty"`
	// Space is a .sql export's estimate of its text and the bytes it wrote
	// (nil for a folder export: it writes only its export.json, or for a
	// file an earlier attempt finished).
	Space *spaceneed.Step `json:"Room,omitempty"`
}

// RemoveStagingInput removes a failed export's staging folder.
type RemoveStagingInput struct {
	Staging string
}
