package calls

import (
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// UploadSnapshotInput uploads a source's published snapshots up to
// SnapshotID (the one just published) that are not on the remote store yet.
type UploadSnapshotInput struct {
	Source     string
	SnapshotID string
}

// UploadSnapshotResult is what went up: one entry per snapshot uploaded,
// oldest first, and the totals. Location is "" when the worker has no
// remote store (nothing was done).
type UploadSnapshotResult struct {
	Location  string               `json:",omitempty"`
	Snapshots []remote.UploadStats `json:",omitempty"`
	// Current is the snapshot the remote current pointer names after the
	// last upload.
	Current       string `json:",omitempty"`
	FilesUploaded int
	FilesCopied   int
	FilesSkipped  int
	BytesUploaded int64 // read from local files and sent
	BytesCopied   int64 // copied inside the store, not sent
	BytesSkipped  int64 // already on the store
}

// DownloadCurrentInput asks for the remote current snapshot when the source
// folder has none.
type DownloadCurrentInput struct {
	Source string
}

// DownloadCurrentResult names the snapshot downloaded and made current, or
// says why nothing was ("" SnapshotID and a Reason).
type DownloadCurrentResult struct {
	Location   string `json:",omitempty"`
	SnapshotID string `json:",omitempty"`
	Reason     string `json:",omitempty"`
	Stats      remote.DownloadStats
	// Space is the download's estimate (the objects still missing) and the
	// bytes downloaded (nil when nothing was to download).
	Space *spaceneed.Step `json:"Room,omitempty"`
}

// Add counts one snapshot's upload into the totals.
func (r *UploadSnapshotResult) Add(st remote.UploadStats) {
	r.Snapshots = append(r.Snapshots, st)
	r.Current = st.Current
	r.FilesUploaded += st.Uploaded
	r.FilesCopied += st.Copied
	r.FilesSkipped += st.Skipped
	r.BytesUploaded += st.BytesUploaded
	r.BytesCopied += st.BytesCopied
	r.BytesSkipped += st.BytesSkipped
}
