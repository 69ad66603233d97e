package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/workflows"
)

// s3Traffic is the HTTP transport of a test's S3 store: it counts the body
// bytes of PUT requests and the DELETE requests, and once armed it kills
// the S3 server just before the n-th PUT it sees.
type s3Traffic struct {
	mu       sync.Mutex
	putBytes int64
	deletes  int
	killAt   int // PUTs left before the kill; 0: not armed
	kill     func()
}

func (s *s3Traffic) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	var kill func()
	switch req.Method {
	case http.MethodDelete:
		s.deletes++
	case http.MethodPut:
		if s.killAt > 0 {
			if s.killAt--; s.killAt == 0 {
				kill = s.kill
			}
		}
		if req.Body != nil {
			req.Body = &countedBody{ReadCloser: req.Body, s: s}
		}
	}
	s.mu.Unlock()
	if kill != nil {
		kill()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// armKill kills the server with kill just before the n-th PUT from now.
func (s *s3Traffic) armKill(n int, kill func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killAt, s.kill = n, kill
}

// takePutBytes returns the PUT body bytes counted since the last call.
func (s *s3Traffic) takePutBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.putBytes
	s.putBytes = 0
	return n
}

func (s *s3Traffic) deleteCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deletes
}

type countedBody struct {
	io.ReadCloser
	s *s3Traffic
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.s.mu.Lock()
	b.s.putBytes += int64(n)
	b.s.mu.Unlock()
	return n, err
}

// openS3 opens the store at url with its traffic counted by traffic.
func openS3(t *testing.T, url string, traffic *s3Traffic) storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), url, storage.Options{HTTPClient: &http.Client{Transport: traffic}})
	must(t, err)
	return s
}

// mirror is the remote mirror of the env's source.
func (e *backupEnv) mirror(t *testing.T) *remote.Mirror {
	t.Helper()
	m, err := remote.New(e.acts.Remote, "main", filepath.Join(e.acts.BackupDir, "main"), nil)
	must(t, err)
	return m
}

// checkRemote requires every local snapshot on the remote store with the
// local manifest's bytes and confirmed, every file of every remote
// snapshot's manifest stored as its content object with its size and
// sha256 (from Stat, and from the content read back), and the remote current to be the local current.
// It returns the remote snapshot ids.
func checkRemote(t *testing.T, e *backupEnv, m *remote.Mirror) []string {
	t.Helper()
	ctx := e.ctx
	dir := filepath.Join(e.acts.BackupDir, "main")
	local, err := snapshot.ListSnapshots(dir)
	must(t, err)
	ids, err := m.List(ctx)
	must(t, err)
	for _, id := range local {
		if !slices.Contains(ids, id) {
			t.Fatalf("local snapshot %s is not on the store (remote: %v)", id, ids)
		}
		ok, err := m.Confirmed(id)
		must(t, err)
		if !ok {
			t.Fatalf("local snapshot %s is not confirmed", id)
		}
	}
	for _, id := range ids {
		man, _, err := m.ReadManifest(ctx, id)
		must(t, err)
		for _, d := range man.Files {
			name, err := m.ObjectName(d)
			must(t, err)
			info, err := m.Store.Stat(ctx, name)
			must(t, err)
			if info.Size != d.Size || info.SHA256 != d.SHA256 {
				t.Fatalf("%s: stored %d bytes sha256 %q, manifest %d bytes %s", name, info.Size, info.SHA256, d.Size, d.SHA256)
			}
			if got := remoteSHA256(t, m, name); got != d.SHA256 {
				t.Fatalf("%s: content sha256 %s, manifest %s", name, got, d.SHA256)
			}
		}
	}
	cur, err := snapshot.ResolveCurrent(dir)
	must(t, err)
	rcur, err := m.Current(ctx)
	must(t, err)
	if rcur != cur {
		t.Fatalf("remote current %s, local current %s", rcur, cur)
	}
	return ids
}

func remoteSHA256(t *testing.T, m *remote.Mirror, name string) string {
	t.Helper()
	rc, err := m.Store.Open(context.Background(), name)
	must(t, err)
	defer rc.Close()
	h := sha256.New()
	_, err = io.Copy(h, rc)
	must(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// uploadOf returns the upload stats of snapshot id in a run's upload.
func uploadOf(t *testing.T, up *calls.UploadSnapshotResult, id string) remote.UploadStats {
	t.Helper()
	if up == nil || up.Location == "" {
		t.Fatalf("no upload in the result (%+v)", up)
	}
	for _, st := range up.Snapshots {
		if st.SnapshotID == id {
			return st
		}
	}
	t.Fatalf("snapshot %s not uploaded by the run: %+v", id, up.Snapshots)
	return remote.UploadStats{}
}

// checkPairUpload requires the upload of a refresh that paired one table
// (and linked every other) to have sent exactly that pair and the
// manifest, and copied everything else inside the store. It returns the
// bytes sent and the paired table file's size.
func checkPairUpload(t *testing.T, e *backupEnv, res workflows.RefreshResult, table string) (sent, tableFile int64) {
	t.Helper()
	snap := e.current(t)
	st := uploadOf(t, res.Upload, res.SnapshotID)
	mt, ok := snap.Manifest.Table("app", table)
	if !ok || mt.Origin != snapshot.OriginPair {
		t.Fatalf("%s: origin %q, want pair", table, mt.Origin)
	}
	for _, o := range snap.Manifest.Tables {
		if o.Table != table && o.Origin != snapshot.OriginLinked {
			t.Fatalf("%s: origin %s, want linked", o.Table, o.Origin)
		}
	}
	pair := mt.Chain[len(mt.Chain)-2:]
	mb := manifestSize(t, snap)
	want := snap.Manifest.Files[pair[0]].Size + snap.Manifest.Files[pair[1]].Size + mb
	if st.Uploaded != 3 || st.Skipped != st.Files-3 || st.Copied != 0 || st.BytesUploaded != want {
		t.Fatalf("upload of %s: %+v; want the pair %v and the manifest sent (%d bytes), the rest found by content", res.SnapshotID, st, pair, want)
	}
	return st.BytesUploaded, snap.Manifest.Files[mt.File].Size
}

// distinctFiles is how many distinct contents the files of snap have: the
// objects its upload puts (files of equal content share one).
func distinctFiles(snap *snapshot.Snapshot) int {
	seen := map[string]bool{}
	for _, d := range snap.Manifest.Files {
		seen[d.SHA256] = true
	}
	return len(seen)
}

func manifestSize(t *testing.T, snap *snapshot.Snapshot) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(snap.Dir, snapshot.ManifestName))
	must(t, err)
	return fi.Size()
}
