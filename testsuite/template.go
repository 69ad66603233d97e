package testsuite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/flock"
)

// templateMarker is written into a template folder once its datadir is
// complete; a folder without it is rebuilt.
const templateMarker = "complete"

// ensureTemplate returns the path of an initialised, never-started-for-tests
// MariaDB datadir that Start copies for each server. It is built once per
// user and server version by mariadb-install-db under
// $TMPDIR/dbtrail-mariadb-template-<version>-uid<uid>, guarded by a file lock
// so that concurrent test processes build it only once.
func ensureTemplate(ctx context.Context) (string, error) {
	version, err := Version(ctx)
	if err != nil {
		return "", err
	}
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, version)
	root := filepath.Join(os.TempDir(), fmt.Sprintf("dbtrail-mariadb-template-%s-uid%d", safe, os.Getuid()))
	data := filepath.Join(root, "data")
	if templateReady(root) {
		return data, nil
	}

	unlock, err := flock.Lock(ctx, root+".lock")
	if err != nil {
		return "", fmt.Errorf("build mariadb template: %w", err)
	}
	defer unlock()
	if templateReady(root) { // another process built it while we waited
		return data, nil
	}

	start := time.Now()
	tmp, err := os.MkdirTemp(os.TempDir(), filepath.Base(root)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("build mariadb template: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op after the rename below
	if err := installDB(ctx, filepath.Join(tmp, "data")); err != nil {
		return "", fmt.Errorf("build mariadb template: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, templateMarker), []byte(version+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("build mariadb template: %w", err)
	}
	if err := os.RemoveAll(root); err != nil { // an incomplete earlier attempt
		return "", fmt.Errorf("build mariadb template: %w", err)
	}
	if err := os.Rename(tmp, root); err != nil {
		return "", fmt.Errorf("build mariadb template: %w", err)
	}
	slog.Info("testsuite: mariadb template datadir built", "dir", data, "version", version,
		"elapsed", time.Since(start).Round(time.Millisecond))
	return data, nil
}

func templateReady(root string) bool {
	_, err := os.Stat(filepath.Join(root, templateMarker))
	return err == nil
}

// installDB runs mariadb-install-db into the (new) folder datadir. Root gets
// socket authentication only; the harness never logs in as root but creates
// its own user through an init file at each start.
func installDB(ctx context.Context, datadir string) error {
	bin, err := findBinary("mariadb-install-db")
	if err != nil {
		return err
	}
	args := []string{
		"--no-defaults",
		"--datadir=" + datadir,
		"--auth-root-authentication-method=socket",
		"--skip-test-db",
		"--skip-name-resolve",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_unicode_ci",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w; output tail:\n%s", bin, err, tail(out.Bytes(), 30))
	}
	if _, err := os.Stat(filepath.Join(datadir, "mysql")); err != nil {
		return fmt.Errorf("%s left no mysql schema in %s: %w", bin, datadir, err)
	}
	return nil
}

// copyDir copies the regular files and folders of src into dst, which must
// exist. Folders get mode 0700 and files keep their permission bits.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if rel == "." {
				return nil
			}
			return os.Mkdir(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(path, target)
		default:
			return nil // sockets, pipes, links: nothing a fresh datadir needs
		}
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil { // copy_file_range on Linux
		_ = out.Close()
		return err
	}
	return out.Close()
}
