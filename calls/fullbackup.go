package calls

import (
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// TableRef names one table of a dump and its files.
type TableRef struct {
	Schema     string   `json:"schema"`
	Table      string   `json:"table"`
	SchemaFile string   `json:"schema_file"`
	DataFiles  []string `json:"data_files"`
}

// AllocateSnapshotInput asks for a new snapshot id of a source.
type AllocateSnapshotInput struct {
	Source string
}

// AllocateSnapshotResult is a snapshot id no snapshot of the source has used.
type AllocateSnapshotResult struct {
	SnapshotID string
}

// DumpInput asks for a consistent mydumper dump of a source into a work
// folder named after the snapshot, so a retry reuses the same folder.
type DumpInput struct {
	Source     string
	SnapshotID string
	// Tables, when not empty, are the only tables dumped ("schema.table",
	// mydumper.ParseTables): a partial full backup. Each must be a base
	// table of the source.
	Tables []string `json:",omitempty"`
}

// DumpResult is where the dump is and what it holds.
type DumpResult struct {
	Dir          string
	Position     binlogpos.Position // Seq is 0 until MapPosition fills it
	Tables       []TableRef
	SkippedViews []string
	// Space is the dump's estimate and the bytes it wrote (nil for a
	// finished dump reused).
	Space *spaceneed.Step `json:"Room,omitempty"`
}

// MapPositionInput asks for the seq of the last captured transaction at or
// before a dump's binlog position.
type MapPositionInput struct {
	Source   string
	Position binlogpos.Position
}

// MapPositionResult is the position with its seq.
type MapPositionResult struct {
	Position binlogpos.Position
}

// ConvertTableInput converts one table of a dump into its Parquet table file
// in the snapshot's staging folder.
type ConvertTableInput struct {
	Source     string
	SnapshotID string
	DumpDir    string
	Table      TableRef
	Position   binlogpos.Position
	// Floats is the table's fix file of exact FLOAT values, relative to
	// DumpDir (ExactFloatsResult.Files); empty: the values stay as dumped.
	Floats string `json:",omitempty"`
}

// ExactFloatsInput asks for the exact FLOAT values of a dump's tables at
// the dump's position (MapPosition's, with its seq).
type ExactFloatsInput struct {
	Source   string
	DumpDir  string
	Tables   []TableRef
	Position binlogpos.Position
}

// ExactFloatsResult names a fix file per table of the input.
type ExactFloatsResult struct {
	// Files is, per table of ExactFloatsInput.Tables (same order), its fix
	// file relative to the dump folder, or "" when the table has no FLOAT
	// value to fix or its values stay as dumped.
	Files []string
	// AsDumped names the tables with FLOAT columns whose values stay as
	// dumped (6 significant digits), with the reason.
	AsDumped []string `json:",omitempty"`
}

// ConvertTableResult describes the written table file.
type ConvertTableResult struct {
	Schema      string `json:"schema"`
	Table       string `json:"table"`
	File        string `json:"file"` // relative to the snapshot folder
	Rows        int64  `json:"rows"`
	Fingerprint string `json:"fingerprint"`
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	// Chain is the table's empty chain start pair (none for a table that is
	// always written in full).
	Chain []ChainFile `json:"chain,omitempty"`
	// Kind is the manifest kind (snapshot.KindDelta or KindFull); empty:
	// KindDelta when Chain is not empty, else KindFull.
	Kind string `json:"kind,omitempty"`
	// Origin is the manifest origin (empty: snapshot.OriginDump).
	Origin string `json:"origin,omitempty"`
	// Part names the attempt of a shared table whose parts folder on the
	// store holds the files it wrote (remote.Mirror.PartName); empty: a
	// table folded on the stager, or put at the final names by an earlier
	// release.
	Part string `json:"part,omitempty"`
	// Space is the step's estimate and the bytes it wrote (nil for a link:
	// nothing is written).
	Space *spaceneed.Step `json:"room,omitempty"`
	// CreateTable is the table's CREATE TABLE when it differs from the one
	// in its table file's footer (a linked or paired table whose definition
	// a metadata-only schema change moved); the manifest records it.
	CreateTable string `json:"create_table,omitempty"`
}

// ChainFile is one .posdel/.upserts file with its digest.
type ChainFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ConvertProgress is the heartbeat detail of ConvertTable.
type ConvertProgress struct {
	Table string
	File  int   // index of the data file being read
	Rows  int64 // rows written so far
	Done  bool
}

// PublishInput publishes a staged snapshot: manifest last, rename, swap
// current.
type PublishInput struct {
	Source     string
	SnapshotID string
	Position   binlogpos.Position
	Tables     []ConvertTableResult
}

// PublishResult is the published snapshot.
type PublishResult struct {
	SnapshotID string
	Dir        string
}

// RemoveDumpInput removes a dump's work folder once it is no longer needed.
type RemoveDumpInput struct {
	Dir string
}
