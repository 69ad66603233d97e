package fold

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

func fileSHA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestKeyMapRefusesAlteredTableFile: a key map is built only from a table
// file whose sha256 is the manifest's.
func TestKeyMapRefusesAlteredTableFile(t *testing.T) {
	m := intTable(t)
	r := rand.New(rand.NewPCG(1, 1))
	nextID, seq := 0, uint64(0)
	m.window(t, r, 20, &nextID, &seq)
	st := startChain(t, t.TempDir(), m, 0)
	sum := fileSHA(t, st.file)
	bad := strings.Repeat("0", 64)
	var de *snapshot.DigestError
	if err := buildKeyMap(TableFile{Path: st.file, SHA256: bad}, filepath.Join(t.TempDir(), "x.keys")); !errors.As(err, &de) {
		t.Fatalf("altered file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "ok.keys")
	if err := buildKeyMap(TableFile{Path: st.file, SHA256: sum}, path); err != nil {
		t.Fatal(err)
	}
	km, err := openKeyMap(TableFile{Path: st.file, SHA256: sum}, path)
	if err != nil {
		t.Fatal(err)
	}
	defer km.Close()
	for i, k := range sortedKeys(m.rows) { // startChain writes rows in key order
		if got, err := km.rows(nil, k); err != nil || len(got) != 1 || got[0] != int64(i) {
			t.Fatalf("key %s: rows %v, want [%d] (%v)", k, got, i, err)
		}
	}
	if got, err := km.rows(nil, "[-1]"); err != nil || len(got) != 0 {
		t.Fatalf("absent key: %v %v", got, err)
	}
}
