package target

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/dsn"
)

// ErrUnreachable wraps the error of a server that does not answer (the
// others of Open are the configuration's).
type ErrUnreachable struct{ err error }

func (e *ErrUnreachable) Error() string { return e.err.Error() }
func (e *ErrUnreachable) Unwrap() error { return e.err }

// Open connects to s (what names it in errors: "target", "replica 1"):
// its DSN held to dsn.ParseTarget, its password from its password file,
// values as text (parseTime off), no multi statements, a 10 s connect
// timeout unless the DSN says otherwise. It returns the pool and the
// server's address; a server that does not answer is *ErrUnreachable.
func Open(ctx context.Context, s Server, what string) (*sql.DB, string, error) {
	cfg, err := dsn.ParseTarget(what+" DSN", s.DSN)
	if err != nil {
		return nil, "", err
	}
	if s.PasswordFile != "" {
		b, err := os.ReadFile(s.PasswordFile)
		if err != nil {
			return nil, cfg.Addr, fmt.Errorf("%s password file: %w", what, err)
		}
		cfg.Passwd = strings.TrimRight(string(b), "\r\n")
	}
	cfg.ParseTime, cfg.MultiStatements, cfg.InterpolateParams = false, false, true
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, cfg.Addr, fmt.Errorf("%s %s: %w", what, cfg.Addr, err)
	}
	db := sql.OpenDB(conn)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, cfg.Addr, &ErrUnreachable{fmt.Errorf("%s %s cannot be reached: %w", what, cfg.Addr, err)}
	}
	return db, cfg.Addr, nil
}

// CheckSecretFile refuses an ad-hoc target's password file that is not a
// regular file directly inside dir (the worker's secrets folder, where
// `dbtrail restore` on this machine writes them), owned by this process's
// user and private (0600): a caller can then make the worker read no other
// file of its machine.
func CheckSecretFile(dir, file string) error {
	if dir == "" {
		return fmt.Errorf("password file %s: this worker has no folder for ad-hoc targets' passwords", file)
	}
	if filepath.Dir(filepath.Clean(file)) != filepath.Clean(dir) {
		return fmt.Errorf("password file %s: an ad-hoc target's password file must be in %s", file, dir)
	}
	st, err := os.Lstat(file)
	if err != nil {
		return fmt.Errorf("password file: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("password file %s: want a regular file of mode 0600", file)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("password file %s: owned by another user", file)
	}
	return nil
}

// SecretsDir is the folder of ad-hoc targets' password files on this
// machine: <user cache>/dbtrail/secrets, the same for `dbtrail restore`
// and a worker run by the same user.
func SecretsDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "dbtrail", "secrets"), nil
}

// WriteSecret writes pw to a 0600 file of SecretsDir (created 0700) named
// after who (user@address), crash-safe, and returns its path.
func WriteSecret(who, pw string) (string, error) {
	dir, err := SecretsDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(who))
	path := filepath.Join(dir, "restore-"+hex.EncodeToString(h[:8]))
	if err := atomicfile.Write(path, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, pw+"\n"); return err }); err != nil {
		return "", err
	}
	return path, nil
}
