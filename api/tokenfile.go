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
