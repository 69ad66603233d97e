package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
)

// DevTokenFile is the name of `dbtrail dev`'s token file in its data folder.
const DevTokenFile = "api-tokens"

// DevTokenName is the name of the read-write token EnsureTokenFile writes.
const DevTokenName = "dev"

// EnsureTokenFile returns the tokens of the token file path (LoadTokens:
// mode 0600 or it is refused), creating it first when it does not exist:
// one line "rw SECRET dev", a read-write token named DevTokenName whose
// secret is 32 random bytes in hex, written crash-safely with mode 0600 (its folder created 0700).
// created reports that it was written now; a file that exists is read as it
// is, never rewritten.
func EnsureTokenFile(path string) (toks []Token, created bool, err error) {
	_, err = os.Stat(path)
	switch {
	case err == nil:
		toks, err = LoadTokens(path)
		return toks, false, err
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("token file: %w", err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, false, fmt.Errorf("token file %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("token file: %w", err)
	}
	text := fmt.Sprintf("rw %s %s\n", hex.EncodeToString(secret), DevTokenName)
	if err := atomicfile.Write(path, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	}); err != nil {
		return nil, false, fmt.Errorf("token file: %w", err)
	}
	toks, err = LoadTokens(path)
	return toks, true, err
}

// DevSecret returns the secret of the DevTokenName token of the token file
// path (mode 0600, as LoadTokens), for a client on the same machine, such
// as the demo.
func DevSecret(path string) (string, error) {
	if _, err := LoadTokens(path); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "rw" && f[2] == DevTokenName {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("token file %s holds no read-write token named %s", path, DevTokenName)
}

// Curl is the start of a curl command line that sends the first token of
// the token file path and Content-Type: application/json (every POST
// needs it), as dev and the demo print it.
func Curl(path string) string {
	quoted := "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	return fmt.Sprintf(`curl -s -H "Authorization: Bearer $(awk '/^r[ow] /{print $2; exit}' %s)" -H 'Content-Type: application/json'`, quoted)
}
