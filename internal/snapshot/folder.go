package snapshot

import "path/filepath"

// Folder is a source's folder in the backup folder (<backup-dir>/<source>):
// the one place that knows the names of what it holds.
//
//	snapshots/<id>/    published snapshots (manifest.json last)
//	current            symlink to the published snapshot readers use
//	views.sql          DuckDB views of current
//	.staging/<id>/     a snapshot being built (with its owner file)
//	.partial/<id>/     partial snapshots (manifest kind partial: some tables
//	                   re-dumped for a refresh; never current, never listed)
//	.trash/<id>/       a snapshot being removed
//	.download/<id>/    a snapshot being fetched from object storage
//	.compact/          compaction output waiting for the next refresh:
//	                   <schema>/<table>.<from>-<to>.posdel/.upserts and
//	                   <schema>/<table>.json (foldplan.CompactedRange, last)
//	.remote/<id>.ok    markers of snapshots confirmed on object storage
//	.parts/            a source folder of its own, for the tables of another
//	                   worker's refresh folded here: snapshots/<prev>/ holds
//	                   the previous snapshot's manifest and the files of those
//	                   tables (fetched from the store), .staging/<id>/ what
//	                   was written for them (put on the store), .cache/<sha256>
//	                   hard links to the fetched files by content, kept while
//	                   the previous snapshot lists them
//	.publish.lock      the publish lock (LockPublish)
type Folder string

// Names inside a source folder.
const (
	SnapshotsDir    = "snapshots"
	StagingDir      = ".staging"
	PartialDir      = ".partial"
	TrashDir        = ".trash"
	DownloadDir     = ".download"
	CompactDir      = ".compact"
	RemoteDir       = ".remote"
	PartsDir        = ".parts"
	CacheDir        = ".cache"
	PublishLockName = ".publish.lock"
	CurrentLink     = "current"
)

// Parts is the source folder of the tables folded here for a refresh staged
// on another worker.
func (f Folder) Parts() Folder { return Folder(filepath.Join(string(f), PartsDir)) }

// Cache is the folder of a parts folder's fetched files by content; with a
// sha256 (hex), that file's.
func (f Folder) Cache(sha256 ...string) string { return f.join(CacheDir, sha256) }

// Snapshots is the folder of published snapshots.
func (f Folder) Snapshots() string { return filepath.Join(string(f), SnapshotsDir) }

// Snapshot is the folder of published snapshot id.
func (f Folder) Snapshot(id string) string { return filepath.Join(string(f), SnapshotsDir, id) }

// Current is the `current` symlink.
func (f Folder) Current() string { return filepath.Join(string(f), CurrentLink) }

// Staging is the folder of snapshots being built; with an id, that one's.
func (f Folder) Staging(id ...string) string { return f.join(StagingDir, id) }

// Partial is the folder of partial snapshots; with an id, that one's.
func (f Folder) Partial(id ...string) string { return f.join(PartialDir, id) }

// Trash is the folder of snapshots being removed; with an id, that one's.
func (f Folder) Trash(id ...string) string { return f.join(TrashDir, id) }

// Download is the folder of snapshots being fetched; with an id, that one's.
func (f Folder) Download(id ...string) string { return f.join(DownloadDir, id) }

// Compact is the folder of compaction output; with a relative path
// (slash-separated), that file's.
func (f Folder) Compact(rel ...string) string { return f.join(CompactDir, rel) }

// Remote is the folder of confirmation markers; with a name, that one's.
func (f Folder) Remote(name ...string) string { return f.join(RemoteDir, name) }

// PublishLock is the publish lock file.
func (f Folder) PublishLock() string { return filepath.Join(string(f), PublishLockName) }

func (f Folder) join(dir string, rest []string) string {
	parts := []string{string(f), dir}
	for _, r := range rest {
		parts = append(parts, filepath.FromSlash(r))
	}
	return filepath.Join(parts...)
}
