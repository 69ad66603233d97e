// Package spaceneed is the one rule by which a step estimates the bytes it
// will write before it writes them (docs/workflows.md, "Room"): every
// estimate is made from what is measured of the data the step reads (the
// table's own files as written, the source's data length, the files an
// export or a restore reads), times one stated Margin, and never under
// Floor. Where nothing can be measured the estimate is not Sure: the step
// writes and, should the folder fill, fails cleanly (no space left) rather
// than being refused on a guess.
//
// The functions are pure: callers measure (manifests, Parquet footers,
// information_schema) and check the estimate against a folder's free
// space (package disk).
package spaceneed

import "math"

// Margin is the one margin of every estimate: Margin × what is measured.
const Margin = 1.5

// Floor is the least estimate: a step that writes a few rows still writes
// files with footers (the table's definition, Parquet metadata).
const Floor = 256 << 10

// PairRowExtra is what a changed row adds to a pair besides its columns,
// counted when a pair is estimated from the table file (no pair measured
// yet): the .upserts' key text and op, the .posdel's row number, and the
// poorer compression of a few rows against a whole table file.
const PairRowExtra = 8

// Expansion is how much larger the plain forms of rows (a restore's staged
// table, written without compression or dictionaries,
// snapshot.WriterOptions.Scratch; an export's .sql text) are taken to be
// than the compressed Parquet they are read from when the files' plain
// size (Table.Plain) is not measured.
const Expansion = 3

// Estimate is a step's estimated bytes. Sure is false when nothing could
// be measured: Bytes is then Floor, and the step is not refused on it.
type Estimate struct {
	Bytes uint64 `json:"bytes"`
	Sure  bool   `json:"sure"`
}

// Table is what is measured of a table as a snapshot stores it.
type Table struct {
	// File and Rows are the table file's size (compressed, as written) and
	// rows.
	File uint64
	Rows int64
	// Chain is the size of its chain (.posdel/.upserts files).
	Chain uint64
	// Plain is the uncompressed size of the table file's column data
	// (its footer), PlainBinary the part in binary columns; 0 when not
	// measured.
	Plain, PlainBinary uint64
	// PairBytes, PairRows and PosdelRows are the sizes (.posdel and
	// .upserts), .upserts rows and .posdel rows of the chain's non-empty
	// pairs; 0 when none was measured.
	PairBytes  uint64
	PairRows   int64
	PosdelRows int64
}

// fileRowBytes is the table file's bytes per row (0 without rows).
func (t Table) fileRowBytes() float64 {
	if t.Rows <= 0 {
		return 0
	}
	return float64(t.File) / float64(t.Rows)
}

// expansion is Plain ÷ File when both are measured, else Expansion.
func (t Table) expansion() float64 {
	if t.Plain == 0 || t.File == 0 {
		return Expansion
	}
	return float64(t.Plain) / float64(t.File)
}

// RowBytes is the bytes a changed row takes in a pair: measured on the
// table's pairs when any has rows, else the table file's bytes per row
// plus PairRowExtra; ok is false when the table has neither.
func (t Table) RowBytes() (float64, bool) {
	switch {
	case t.PairRows > 0:
		return float64(t.PairBytes) / float64(t.PairRows), true
	case t.Rows > 0:
		return t.fileRowBytes() + PairRowExtra, true
	}
	return 0, false
}

// sized is the estimate of measured bytes: Margin × measured, at least
// Floor.
func sized(measured float64) Estimate {
	return Estimate{Bytes: max(Floor, uint64(math.Ceil(measured*Margin))), Sure: true}
}

// notSure is the estimate of a step nothing could be measured for.
func notSure() Estimate { return Estimate{Bytes: Floor} }

// window is the bytes the window's changes of t add: RowBytes × changes
// (a table with nothing measured adds 0; ok reports it).
func (t Table) window(changes int64) (float64, bool) {
	if changes <= 0 {
		return 0, true
	}
	rb, ok := t.RowBytes()
	return rb * float64(changes), ok
}

// Pair estimates the .posdel/.upserts pair a refresh writes for a window
// of changes of t: RowBytes × changes (a pair holds at most one row per
// change).
func Pair(t Table, changes int64) Estimate {
	w, ok := t.window(changes)
	if !ok {
		return notSure()
	}
	return sized(w)
}

// Rewrite estimates the table file a refresh folds from t's table file,
// chain and a window of changes: the table file, the rows its chain added
// (.upserts rows beyond the .posdel rows) and one row per change of the
// window, each at the table file's bytes per row. A table with no rows
// measured is estimated from its files (table file and chain).
func Rewrite(t Table, changes int64) Estimate {
	m, ok := rewritten(t, changes)
	if !ok {
		return notSure()
	}
	return sized(m)
}

// rewritten is the measured bytes of Rewrite; ok is false when nothing is.
func rewritten(t Table, changes int64) (float64, bool) {
	rb := t.fileRowBytes()
	if rb == 0 {
		return float64(t.File + t.Chain), t.File+t.Chain > 0
	}
	grown := max(t.PairRows-t.PosdelRows, 0) + max(changes, 0)
	return float64(t.File) + rb*float64(grown), true
}

// Export estimates what an export of t at a moment writes: as Rewrite for
// a Parquet table file; for .sql text, Staging.
func Export(t Table, changes int64, sql bool) Estimate {
	if sql {
		return Staging(t, changes)
	}
	return Rewrite(t, changes)
}

// Staging estimates the plain form of t rebuilt with a window of changes
// (a restore's staged table, an export's .sql text): Rewrite's measure
// times the table file's plain ÷ compressed size (Expansion when not
// measured).
func Staging(t Table, changes int64) Estimate {
	m, ok := rewritten(t, changes)
	if !ok {
		return notSure()
	}
	return sized(m * t.expansion())
}

// Dump estimates mydumper's output for a source whose tables' data length
// (information_schema.tables.data_length, without indexes) is dataLength.
func Dump(dataLength uint64) Estimate { return sized(float64(dataLength)) }

// Converted is what a sample conversion measured: Text bytes of a dump's
// data files (a prefix, cut at a statement's end) converted into Parquet
// bytes of table file by the real table writer.
type Converted struct {
	Text, Parquet uint64
}

// Convert estimates the table file converted from a dump whose data files
// take dumpFiles bytes: dumpFiles × the sample's Parquet ÷ Text, with the
// margin, at least Floor. Without a sample (Text 0) it is the dump files
// themselves, no margin (Parquet of rows is smaller than their INSERT
// text): an upper bound, still Sure.
func Convert(dumpFiles uint64, sample Converted) Estimate {
	if sample.Text == 0 {
		return Estimate{Bytes: max(Floor, dumpFiles), Sure: true}
	}
	return sized(float64(dumpFiles) * float64(sample.Parquet) / float64(sample.Text))
}

// Exact is the estimate of a step whose bytes are known before it writes
// (the files a download fetches, the chain a compaction merges): no
// margin.
func Exact(n uint64) Estimate { return Estimate{Bytes: n, Sure: true} }

// Text estimates the .sql text composed from table files t (File, and
// Plain when measured): their plain size, binary columns counted twice
// (their text is hex), with the margin.
func Text(t Table) Estimate {
	if t.Plain == 0 {
		return sized(float64(t.File) * Expansion)
	}
	return sized(float64(t.Plain + t.PlainBinary))
}

// Changes estimates a changes export of a table: nothing measured says how
// large its before and after images are, so it is not Sure (the export
// writes and fails cleanly on a full folder).
func Changes() Estimate { return notSure() }

// Sum is the estimate of steps that all write into one folder: Sure when
// every one is.
func Sum(es ...Estimate) Estimate {
	out := Estimate{Sure: true}
	for _, e := range es {
		out.Bytes += e.Bytes
		out.Sure = out.Sure && e.Sure
	}
	return out
}

// The kinds of Step besides a refresh's "pair" and "rewrite" (RefreshTable,
// named by its foldplan action).
const (
	KindDump     = "dump"     // Dump
	KindConvert  = "convert"  // ConvertTable
	KindCompact  = "compact"  // CompactTable
	KindDownload = "download" // DownloadCurrent
	KindExport   = "export"   // ExportTable: a table file
	KindChanges  = "changes"  // ExportTable: a table's changes files
	KindSQL      = "sql"      // FinishExport: a .sql export's text
	KindStage    = "stage"    // LoadTable: a restore's staged table
)

// Step is what a step's result records of its room, the one form every
// result uses (visible in the workflow's history): its kind, its estimate
// (Estimate bytes, Sure as the Estimate's) and the bytes it actually wrote
// (Written: the files it leaves, as their sizes on disk).
type Step struct {
	Kind     string `json:"kind"`
	Estimate uint64 `json:"estimate"`
	Sure     bool   `json:"sure"`
	Written  uint64 `json:"written"`
}

// Record is the Step of kind that estimated e and wrote written bytes.
func Record(kind string, e Estimate, written uint64) *Step {
	return &Step{Kind: kind, Estimate: e.Bytes, Sure: e.Sure, Written: written}
}

// Ratio is actual ÷ estimate (0 for an estimate of 0): the bench reports
// it per step kind, the target being between 0.4 and 1.
func Ratio(actual, estimate uint64) float64 {
	if estimate == 0 {
		return 0
	}
	return float64(actual) / float64(estimate)
}
