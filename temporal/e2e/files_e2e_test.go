package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestFilesPrivate runs `dbtrail worker` as a process (the root command
// sets the umask: DuckDB and mydumper follow it) through a full backup, a
// refresh, an export and a restore into a target server, while a watcher
// stats everything under the backup, work and export folders: no file or
// folder is ever readable, writable or enterable by the group or others,
// temporary, staged and dump files included. A backup folder left 0755
// with a 0644 file from before is tightened at start (one log line), and a
// symbolic link in it to a file outside is not followed.
func TestFilesPrivate(t *testing.T) {
	e, w, check, w2 := startFilesEnv(t, filemode.Private)
	loose := filepath.Join(e.acts.BackupDir, "note-from-before")
	outside := filepath.Join(t.TempDir(), "outside")
	must(t, os.WriteFile(outside, []byte("x"), 0o600))
	must(t, os.Chmod(outside, 0o644))
	must(t, os.Symlink(outside, filepath.Join(e.acts.BackupDir, "link-out")))
	target := testsuite.StartTarget(t, 31)
	ref := e.target(t, target)
	p := startWorkerCmd(t, buildDbtrail(t), e.frontend, e, e.indexDSN, "--backup-dir", e.acts.BackupDir, "--work-dir", e.acts.WorkDir,
		"--restore-targets", e.targetsFile(t))

	e.fullBackup(t)
	if !p.out.contains(`folder tightened`) || !p.out.contains(`path=`+e.acts.BackupDir) {
		t.Fatalf("no log line of the backup folder tightened:\n%s", p.out)
	}
	if m := permOf(t, loose); m != 0o600 {
		t.Errorf("the file from before is %o after the start, want 600", m)
	}
	if m := permOf(t, outside); m != 0o644 {
		t.Errorf("the file behind a link became %o: the link was followed", m)
	}
	w.step(t, e, 40)
	e.waitCaughtUp(t)
	if res := e.refresh(t, payload.RefreshInput{TableDeltas: true}); res.Refused {
		t.Fatalf("refresh refused: %+v", res)
	}
	if _, err := e.export(t, payload.ExportSpec{Format: payload.ExportParquet, At: "latest", Out: filepath.Join(filesExports(e), "at-latest")}); err != nil {
		t.Fatalf("export: %v", err)
	}
	if _, err := e.restore(t, target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest", Schemas: []string{"app"}, Target: ref}}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	check(filemode.Private)
	for _, under := range []string{filepath.Join(e.acts.WorkDir, "restore") + "/", filepath.Join(filesExports(e), "at-latest") + "/"} {
		if !w2.sawUnder(under) {
			t.Errorf("the watcher saw nothing under %s", under)
		}
	}
}

// TestFilesGroupReadable is TestFilesPrivate's full backup and export with
// DBTRAIL_FILE_MODE=group: the group reads (files 0640, folders 0750),
// others get nothing.
func TestFilesGroupReadable(t *testing.T) {
	e, _, check, _ := startFilesEnv(t, filemode.Group)
	t.Setenv("DBTRAIL_FILE_MODE", "group") // the worker process inherits it
	startWorkerCmd(t, buildDbtrail(t), e.frontend, e, e.indexDSN, "--backup-dir", e.acts.BackupDir, "--work-dir", e.acts.WorkDir)
	e.fullBackup(t)
	if _, err := e.export(t, payload.ExportSpec{Format: payload.ExportParquet, At: "latest", Out: filepath.Join(filesExports(e), "at-latest")}); err != nil {
		t.Fatalf("export: %v", err)
	}
	check(filemode.Group)
}

func filesExports(e *backupEnv) string { return filepath.Join(e.dir, "exports") }

// startFilesEnv is a source with a workload and no worker; the backup
// folder exists with a 0644 file from before, 0755. It returns the watch
// and a check
// that stops the watcher, walks the folders once more and fails on any
// mode beyond p's, and requires the current snapshot's manifest to be
// exactly p.File() (the mode took effect).
func startFilesEnv(t *testing.T, p filemode.Policy) (*backupEnv, *workload, func(filemode.Policy), *modeWatch) {
	t.Helper()
	e := newBackupEnv(t, withoutWorker())
	w := newWorkload(31)
	w.setup(t, e, 300)
	must(t, os.MkdirAll(e.acts.BackupDir, 0o755))
	must(t, os.Chmod(e.acts.BackupDir, 0o755))
	loose := filepath.Join(e.acts.BackupDir, "note-from-before")
	must(t, os.WriteFile(loose, []byte("x"), 0o600))
	must(t, os.Chmod(loose, 0o644))
	// The export folder is the operator's (the worker writes where an
	// export names it); dbtrail creates what is inside.
	must(t, os.Mkdir(filesExports(e), p.Dir()))
	folders := []string{e.acts.BackupDir, e.acts.WorkDir, filesExports(e)}
	m := &modeWatch{seen: map[string]fs.FileMode{}, allowFile: p.File(), allowDir: p.Dir()}
	stop := m.run(folders)
	return e, w, func(p filemode.Policy) {
		t.Helper()
		stop()
		for _, f := range folders {
			m.walk(f, true)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.walks < 2 {
			t.Fatalf("the watcher walked %d times", m.walks)
		}
		for path, mode := range m.bad {
			t.Errorf("%s was %v: beyond %v's %o/%o", path, mode, p, p.File(), p.Dir())
		}
		if m.files == 0 {
			t.Fatal("the watcher saw no file")
		}
		snap, err := snapshot.OpenCurrent(filepath.Join(e.acts.BackupDir, "main"))
		must(t, err)
		if got := permOf(t, filepath.Join(snap.Dir, snapshot.ManifestName)); got != p.File() {
			t.Errorf("the manifest is %o, want %o", got, p.File())
		}
		t.Logf("%d files and folders seen over %d walks, %d beyond %v", m.files, m.walks, len(m.bad), p)
	}, m
}

// sawUnder is whether the watcher saw a file or folder under prefix.
func (m *modeWatch) sawUnder(prefix string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for path := range m.seen {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// modeWatch walks folders again and again while the runs write, so that
// short-lived files (temporary, staged, dumped) are seen too, and keeps
// every path whose mode went beyond what is allowed.
type modeWatch struct {
	allowFile, allowDir fs.FileMode
	mu                  sync.Mutex
	bad                 map[string]fs.FileMode
	seen                map[string]fs.FileMode
	files, walks        int
}

func (m *modeWatch) run(folders []string) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			for _, f := range folders {
				m.walk(f, false)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-stopped }) }
}

// walk stats everything under root (links are not followed); a missing
// root or an entry removed meanwhile is skipped. The file from before is
// judged only on the final walk (it is loose until the worker starts).
func (m *modeWatch) walk(root string, final bool) {
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		allowed := m.allowFile
		if info.IsDir() {
			allowed = m.allowDir
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if _, ok := m.seen[path]; !ok {
			m.files++
		}
		m.seen[path] = info.Mode()
		if info.Mode().Perm()&^allowed != 0 && (final || !strings.Contains(path, "note-from-before") && !isStartFolder(path, root)) {
			if m.bad == nil {
				m.bad = map[string]fs.FileMode{}
			}
			m.bad[path] = info.Mode()
		}
		return nil
	})
	m.mu.Lock()
	m.walks++
	m.mu.Unlock()
}

// isStartFolder: the backup folder itself is 0755 until the worker
// tightens it at start; the final walk judges it.
func isStartFolder(path, root string) bool { return path == root }

func permOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// contains is whether the whole output so far holds s.
func (b *lockedBuffer) contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Contains(b.buf.String(), s)
}
