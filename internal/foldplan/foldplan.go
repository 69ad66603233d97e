// Package foldplan decides what a refresh does with every table before
// anything is executed (see docs/workflows.md), the way restic's
// ApplyPolicy or Litestream's CalcRestorePlan do: Make is a pure function of
// its Input (no I/O, no clock but Input.Now), deterministic (tables sorted,
// no map order leaks), and every decision carries a human-readable reason
// for the Temporal UI and the logs.
//
// One cut for every table: Input.Cut, the capture checkpoint's seq taken at
// the start of the refresh (a transaction boundary). The window is
// (previous snapshot position, cut]. Per table the plan links the previous
// files forward, writes one new delta pair, rewrites the table in full, or
// refuses; one refused table refuses the whole refresh (all or nothing).
package foldplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Defaults and thresholds of the rules.
const (
	// DefaultMaxChainAge is the age at which a chain ends (Input.MaxChainAge 0).
	DefaultMaxChainAge = 24 * time.Hour
	// MinChainBytes: a chain of at most this many bytes is never rewritten
	// for its size.
	MinChainBytes = 1 << 20
	// CompactAt is the number of chain entries (a range pair counts as one)
	// at which a Compact workflow is started after the refresh.
	CompactAt = 16
)

// TableKey names a source table.
type TableKey struct{ Schema, Table string }

func (k TableKey) String() string { return k.Schema + "." + k.Table }

func cmpKey(a, b TableKey) int {
	if c := strings.Compare(a.Schema, b.Schema); c != 0 {
		return c
	}
	return strings.Compare(a.Table, b.Table)
}

// Action is what the refresh does with one table.
type Action string

const (
	// ActionLink: no changes; hard-link the table file and every chain entry.
	ActionLink Action = "link"
	// ActionPair: link the previous files and write pair Next.
	ActionPair Action = "pair"
	// ActionRewrite: write a new table file and an empty 000000 pair (no
	// pair for a table always written in full).
	ActionRewrite Action = "rewrite"
	// ActionRefuse: the table cannot be refreshed; nothing is published.
	ActionRefuse Action = "refuse"
	// ActionRedump: a schema change the fold cannot prove; the table is
	// dumped again alone (a partial full backup) and the refresh planned
	// again with it (Input.Redumped).
	ActionRedump Action = "redump"
	// ActionDrop: the table was dropped in the window; the new snapshot
	// does not list it (older snapshots keep it).
	ActionDrop Action = "drop"
)

// Redumped is a table dumped again alone by a partial full backup: the
// partial snapshot that holds it, its position and its table file's
// stored definition.
type Redumped struct {
	SnapshotID string
	Seq        uint64
	Position   binlogpos.Position
	Def        *schema.Table
}

// SourceFile is a file a compacted range was merged from: its path in the
// snapshot and its sha256.
type SourceFile struct{ Path, SHA256 string }

// CompactedRange is a range pair waiting in .compact/ for a table.
type CompactedRange struct {
	From, To int // the chain numbers merged, e.g. 0 and 14
	// Posdel and Upserts are the range pair's files, relative to .compact/.
	Posdel, Upserts             string
	PosdelDigest, UpsertsDigest digest.Digest
	// TableFile is the table file the merged chain applied to, and Merged the
	// chain files merged (posdel, upserts of each entry, in chain order). The
	// range is used only when both match the previous snapshot exactly.
	TableFile SourceFile
	Merged    []SourceFile
}

// Input is everything the plan depends on.
type Input struct {
	Cut    uint64             // capture checkpoint seq at the start of the refresh
	CutPos binlogpos.Position // binlog position of that checkpoint
	// Prev is the previous (current) snapshot; nil refuses the plan.
	Prev      *snapshot.Manifest
	PrevLocal bool // Prev's files are on local disk (can be hard-linked)
	Now       time.Time
	// Changes: rows changed per table in the window; absent means 0.
	Changes map[TableKey]int64
	// Schemas: schema history versions. Only those inside the window count;
	// the window is decided by binlog position at its seq ends (a DDL right
	// after the previous snapshot carries the snapshot's own seq), so pass
	// at least every version with Prev seq <= Seq <= Cut (passing more is fine).
	Schemas []change.SchemaVersion
	// Footers: the footer of every previous table file (its definition, and
	// its snapshot id: the chain's start).
	Footers map[TableKey]snapshot.FooterMeta
	// Current: the newest definition of every table at the cut (absent or
	// nil: the table does not exist). It must list exactly the tables the
	// snapshots cover.
	Current     map[TableKey]*schema.Table
	Gaps        []change.Gap
	Compacted   map[TableKey]CompactedRange
	TableDeltas bool
	MaxChainAge time.Duration // 0 means DefaultMaxChainAge
	// Redumped are tables a partial full backup read again for this
	// refresh: each is rewritten from its partial snapshot forward to the cut.
	Redumped map[TableKey]Redumped
}

// Link is one file the new snapshot hard-links: Src is relative to the
// previous snapshot folder, or to .compact/ when FromCompact.
type Link struct {
	Dst, Src    string
	FromCompact bool
	Digest      digest.Digest // for the new manifest, without hashing again
}

// TablePlan is the decision for one table.
type TablePlan struct {
	Key     TableKey
	Action  Action
	Reason  string
	Changes int64
	// Kind is the table's manifest kind after the refresh ("" when refused).
	Kind string
	// Chain is the chain the new snapshot lists, before the new pair if any
	// (link, pair; nil for rewrite and refuse).
	Chain []string
	// Next is the chain number of the new pair (pair), 0 otherwise (a
	// rewrite starts its chain at 000000).
	Next int
	// Links are the files to hard-link (link, pair): the table file first,
	// then Chain in order.
	Links []Link
	// UseCompacted is the waiting range linked in place of the pairs it
	// merged; CompactNote says why a waiting range was used or ignored.
	UseCompacted *CompactedRange
	CompactNote  string
	// DropCompacted: the table's waiting range in .compact/ is no longer of
	// use (linked by this refresh, or ignored) and is removed after publish.
	DropCompacted   bool
	NeedsCompaction bool
	// Lineage is the table's schema changes in the window a rewrite folds
	// (renames, reshapes, an empty start); nil when it has none.
	Lineage *schemahist.Lineage `json:",omitempty"`
	// Base and BaseSeq are the snapshot a rewrite starts from and its seq
	// when it is not the previous one (a partial re-dump's); "" otherwise.
	Base    string `json:",omitempty"`
	BaseSeq uint64 `json:",omitempty"`
	// DefinitionMoved: metadata-only schema changes in the window; the
	// files are kept and the snapshot records the table's new CREATE TABLE.
	DefinitionMoved bool `json:",omitempty"`
}

// From names the table in the snapshot a rewrite starts from: its base
// name when the lineage renamed it, else Key. ok is false for a table
// created in the window (nothing to start from).
func (t TablePlan) From() (k TableKey, ok bool) {
	if t.Lineage == nil || t.Base != "" {
		return t.Key, true
	}
	if t.Lineage.Created {
		return TableKey{}, false
	}
	return TableKey{t.Lineage.Base.Schema, t.Lineage.Base.Table}, true
}

// CompactJob is one table's compaction after a refresh: Merge are the chain
// files of the published snapshot to merge into one range pair (posdel,
// upserts, … in chain order, starting at entry 000000), which must be the
// first entries of that snapshot's chain. It is every entry but the last:
// the one a pair added, or the newest one linked forward.
type CompactJob struct {
	Key   TableKey
	Merge []string
}

// String is the table's line for a log.
func (t TablePlan) String() string {
	s := t.Key.String() + ": " + t.Reason
	if t.CompactNote != "" {
		s += " (" + t.CompactNote + ")"
	}
	return s
}

// Plan is the decision for the whole refresh. When Refused, nothing is
// published and Compact is empty; Tables still shows each table's decision.
type Plan struct {
	Cut     uint64
	Refused bool
	Reasons []string // every refusal, with table names
	// Redump names the tables to dump again before the plan can be
	// executed (ActionRedump); the refresh plans again with them.
	Redump  []TableKey   `json:",omitempty"`
	Tables  []TablePlan  // sorted by schema, table
	Compact []CompactJob // tables to compact after the refresh is published
}

func (p *Plan) refuse(reason string) {
	p.Refused = true
	p.Reasons = append(p.Reasons, reason)
}

// Make computes the plan.
func Make(in Input) Plan {
	p := Plan{Cut: in.Cut}
	if in.Prev == nil {
		p.refuse("no previous snapshot: take a full backup")
		return p
	}
	w := newWindow(in)
	if in.Prev.Position.Seq < 0 || in.Cut < w.FromSeq {
		p.refuse(fmt.Sprintf("cut seq %d is before the previous snapshot %s (seq %d)",
			in.Cut, in.Prev.SnapshotID, in.Prev.Position.Seq))
		return p
	}
	vers := w.versions(in.Schemas)
	global := w.globalRewrites(in)
	gaps := w.gapRefusals(in)
	tr := trace(w, in)
	prev, planned := map[TableKey]bool{}, map[TableKey]bool{}
	tables := slices.Clone(in.Prev.Tables)
	slices.SortStableFunc(tables, func(a, b snapshot.ManifestTable) int {
		return cmpKey(TableKey{a.Schema, a.Table}, TableKey{b.Schema, b.Table})
	})
	for _, mt := range tables {
		k := TableKey{mt.Schema, mt.Table}
		if prev[k] {
			p.Tables = append(p.Tables, TablePlan{Key: k, Action: ActionRefuse,
				Reason: "refused: listed twice in the previous snapshot's manifest"})
			continue
		}
		prev[k] = true
		l, traced := tr.Tables[key(k)]
		_, redumped := in.Redumped[k]
		why, gone := tr.Gone[key(k)]
		switch {
		case len(gaps) > 0 || (traced && l.Base == key(k) && !l.Folded() && l.Redump == "" && !redumped):
			p.Tables = append(p.Tables, planTable(in, mt, l, vers, global, gaps))
			planned[k] = true
		case gone && in.Current[k] == nil:
			p.Tables = append(p.Tables, TablePlan{Key: k, Action: ActionDrop, Reason: "drop: " + why + "; older snapshots keep it"})
		}
	}
	p.Tables = append(p.Tables, planLineages(in, tr, prev, planned, gaps)...)
	slices.SortStableFunc(p.Tables, func(a, b TablePlan) int { return cmpKey(a.Key, b.Key) })
	for _, g := range gaps {
		p.refuse(g)
	}
	for _, t := range p.Tables {
		if t.Action == ActionRefuse && t.Reason != "refused: "+gapRefusal {
			p.refuse(t.Key.String() + ": " + strings.TrimPrefix(t.Reason, "refused: "))
		}
		if t.Action == ActionRedump {
			p.Redump = append(p.Redump, t.Key)
		}
		if t.NeedsCompaction {
			p.Compact = append(p.Compact, CompactJob{Key: t.Key, Merge: t.compactMerge()})
		}
	}
	if p.Refused {
		p.Compact, p.Redump = nil, nil
	}
	return p
}

func sortedKeys[V any](m map[TableKey]V) []TableKey {
	keys := make([]TableKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmpKey)
	return keys
}

// compactMerge is the chain files a compaction after t merges: all but the
// published chain's last entry.
func (t TablePlan) compactMerge() []string {
	if t.Action == ActionPair {
		return slices.Clone(t.Chain)
	}
	return slices.Clone(t.Chain[:max(len(t.Chain)-2, 0)])
}
