package snapshot

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/digest"
)

// ManifestVersion is the Version written by this package.
const ManifestVersion = 1

// Names inside a source folder and a snapshot folder.
const (
	ManifestName = "manifest.json"
)

// idLayout is the snapshot id: UTC time to the second.
const idLayout = "20060102T150405Z"

// Manifest is a snapshot's manifest.json: its position, its tables with
// their chains, and the sha256 and size of every file in the snapshot.
// Paths are relative to the snapshot folder, with '/' separators.
type Manifest struct {
	Version    int                `json:"version"`
	SnapshotID string             `json:"snapshot_id"`
	Source     string             `json:"source"`
	Position   binlogpos.Position `json:"position"`
	CreatedAt  time.Time          `json:"created_at"`
	// Kind is how the snapshot was made: SnapshotFull (a full backup),
	// SnapshotRefresh (folded from Prev and the index) or SnapshotPartial
	// (some tables re-dumped, kept under .partial/, never current). Empty
	// in manifests written before the field existed (full backups).
	Kind string `json:"kind,omitempty"`
	// Prev is the snapshot a refresh was folded from.
	Prev   string                   `json:"prev,omitempty"`
	Tables []ManifestTable          `json:"tables"`
	Files  map[string]digest.Digest `json:"files"`
}

// ManifestTable is one table of a snapshot.
type ManifestTable struct {
	Schema      string      `json:"schema"`
	Table       string      `json:"table"`
	File        string      `json:"file"` // the table file, "<schema>/<table>.parquet"
	Rows        int64       `json:"rows"` // rows of the table file
	Fingerprint Fingerprint `json:"fingerprint"`
	// Chain lists the .posdel/.upserts files to apply to File, in order.
	Chain []string `json:"chain"`
	Kind  string   `json:"kind"` // KindDelta or KindFull
	// Origin says how this snapshot got the table's files: OriginDump,
	// OriginLinked, OriginPair, OriginRewritten, or OriginCompacted /
	// OriginCompactedPair when a range pair from .compact/ replaced the first
	// chain entries. Empty in manifests written before the field existed.
	Origin string `json:"origin,omitempty"`
	// CreateTable, when set, is the table's CREATE TABLE in this snapshot,
	// in place of its table file footer's: a metadata-only schema change
	// (an index, a comment, a default) moved the definition while the files
	// were kept. Readers take it over the footer's.
	CreateTable string `json:"create_table,omitempty"`
}

// Kinds of a snapshot (Manifest.Kind).
const (
	SnapshotFull    = "full"
	SnapshotRefresh = "refresh"
	// SnapshotPartial is a partial full backup: only the tables named to
	// it, dumped at its own position, for a refresh to fold forward
	// (FinishPartial). It is never current and never listed with the
	// source's snapshots.
	SnapshotPartial = "partial"
)

// Origins of a manifest table (ManifestTable.Origin).
const (
	OriginDump          = "dump"           // converted from a full backup's dump
	OriginLinked        = "linked"         // every file hard-linked from Prev
	OriginPair          = "pair"           // Prev's files linked, one new pair written
	OriginRewritten     = "rewritten"      // a new table file folded from Prev and the index
	OriginCompacted     = "compacted"      // linked, with a range pair from .compact/
	OriginCompactedPair = "compacted+pair" // a range pair from .compact/ and a new pair
)

// Table returns the entry of schema.table, or false.
func (m *Manifest) Table(schemaName, table string) (ManifestTable, bool) {
	for _, t := range m.Tables {
		if t.Schema == schemaName && t.Table == table {
			return t, true
		}
	}
	return ManifestTable{}, false
}

// FilesSize is the size of the files rels, as the manifest records them (a
// file it does not list counts 0).
func (m *Manifest) FilesSize(rels ...string) uint64 {
	var n uint64
	for _, rel := range rels {
		n += uint64(max(m.Files[rel].Size, 0))
	}
	return n
}

// TableSize is the size of schema.table as the snapshot stores it: its
// table file and chain (0 for a table the snapshot does not hold).
func (m *Manifest) TableSize(schemaName, table string) uint64 {
	mt, ok := m.Table(schemaName, table)
	if !ok {
		return 0
	}
	return m.FilesSize(append([]string{mt.File}, mt.Chain...)...)
}

// check validates the manifest's internal consistency: every table's file
// and chain entries are listed in Files, and every path is a clean relative
// path inside the snapshot.
func (m *Manifest) check() error {
	if _, err := ParseSnapshotID(m.SnapshotID); err != nil {
		return err
	}
	for rel := range m.Files {
		if err := checkRel(rel); err != nil {
			return err
		}
	}
	for _, t := range m.Tables {
		for _, rel := range append([]string{t.File}, t.Chain...) {
			if _, ok := m.Files[rel]; !ok {
				return fmt.Errorf("table %s.%s: file %q is not in the manifest's files", t.Schema, t.Table, rel)
			}
		}
	}
	return nil
}

// checkRel refuses a path that is absolute, unclean, or leaves the folder.
func checkRel(rel string) error {
	if rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || rel == "." ||
		rel == ".." || strings.HasPrefix(rel, "../") || strings.ContainsAny(rel, "\\\x00") || rel == ManifestName {
		return fmt.Errorf("bad snapshot file path %q", rel)
	}
	return nil
}

// encode returns the manifest's canonical JSON (indented, map keys sorted,
// times in UTC): two manifests are the same when their encodings are equal.
func (m Manifest) encode() ([]byte, error) {
	m.CreatedAt = m.CreatedAt.UTC()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// readManifest reads and checks dir/manifest.json.
func readManifest(dir string) (Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return Manifest{}, err
	}
	return ParseManifest(b)
}

// ParseManifest decodes the bytes of a manifest.json (read from disk or
// from object storage) and checks them as a reader does: a supported
// version, a well-formed id, clean relative paths, and every table's file
// and chain entries listed in Files.
func ParseManifest(b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if m.Version < 1 || m.Version > ManifestVersion {
		return Manifest{}, fmt.Errorf("%s: unsupported version %d", ManifestName, m.Version)
	}
	if err := m.check(); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return m, nil
}

// NewSnapshotID returns the id for a snapshot made at now: the UTC time to
// the second, "20261129T061500Z". If exists reports the id taken, the time
// advances by one second until a free id is found, so an id is never reused
// (ids are also never in the past of now). exists is typically ExistsIn; an
// error of exists (a folder that cannot be looked into) is returned, never
// taken for "taken", so that no id is searched for forever.
func NewSnapshotID(now time.Time, exists func(id string) (bool, error)) (string, error) {
	t := now.UTC().Truncate(time.Second)
	for {
		id := t.Format(idLayout)
		if exists == nil {
			return id, nil
		}
		taken, err := exists(id)
		if err != nil {
			return "", err
		}
		if !taken {
			return id, nil
		}
		t = t.Add(time.Second)
	}
}

// ExistsIn returns an exists function for NewSnapshotID: an id is taken when
// <sourceDir>/snapshots/<id>, <sourceDir>/.staging/<id> or
// <sourceDir>/.partial/<id> exists. A path
// that can be neither found nor ruled out (a folder on the way that is a
// file, or not readable) is an error.
func ExistsIn(sourceDir string) func(id string) (bool, error) {
	return func(id string) (bool, error) {
		for _, d := range []string{SnapshotsDir, StagingDir, PartialDir} {
			_, err := os.Lstat(filepath.Join(sourceDir, d, id))
			switch {
			case err == nil:
				return true, nil
			case !errors.Is(err, fs.ErrNotExist):
				return false, err
			}
		}
		return false, nil
	}
}

// ParseSnapshotID returns the time of a snapshot id, refusing anything that
// is not exactly the id form.
func ParseSnapshotID(id string) (time.Time, error) {
	t, err := time.Parse(idLayout, id)
	if err != nil || t.Format(idLayout) != id {
		return time.Time{}, fmt.Errorf("malformed snapshot id %q", id)
	}
	return t, nil
}

// ListSnapshots returns the ids of the published snapshots of a source (those
// with a manifest.json), oldest first.
func ListSnapshots(sourceDir string) ([]string, error) {
	ents, err := os.ReadDir(Folder(sourceDir).Snapshots())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if _, err := ParseSnapshotID(e.Name()); err != nil || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(Folder(sourceDir).Snapshot(e.Name()), ManifestName)); err == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// FileDigest is a file of a snapshot with its digest.
type FileDigest struct {
	Path string
	digest.Digest
}

// AddTable lists mt in m with its table file's digest and its chain, in
// order (which replaces mt.Chain). An mt with no Kind is KindDelta when it
// has a chain, else KindFull; one with no Origin is OriginDump.
func (m *Manifest) AddTable(mt ManifestTable, file digest.Digest, chain ...FileDigest) {
	if m.Files == nil {
		m.Files = map[string]digest.Digest{}
	}
	m.Files[mt.File] = file
	mt.Chain = nil
	for _, c := range chain {
		mt.Chain = append(mt.Chain, c.Path)
		m.Files[c.Path] = c.Digest
	}
	if mt.Kind == "" {
		mt.Kind = KindFull
		if len(mt.Chain) > 0 {
			mt.Kind = KindDelta
		}
	}
	mt.Origin = cmp.Or(mt.Origin, OriginDump)
	m.Tables = append(m.Tables, mt)
}
