package fold

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TableFile is a table file with the sha256 its manifest gives it.
type TableFile struct {
	Path   string
	SHA256 string // "" when unknown: no key map is used
}

// A key map is a local index of one table file, from key to row numbers, so
// that a delta pair finds the rows its changed keys make stale with a few
// binary searches instead of a scan of the table file: the pair's cost then
// follows the changed keys, not the table's size. It is a cache, outside
// any snapshot: <KeyMapDir>/<sha256 of the table file>.keys, built from the
// table file the first time a pair needs it (the build checks the file's
// sha256 as it reads it), reused by every later pair of the same chain, and
// rebuilt wherever it is missing.
//
// Format: the magic keyMapMagic, the row count n and the block size b
// (uint64 each, big endian); n 24-byte records sorted bytewise, one per
// row: the first 16 bytes of the sha256 of the row's key string (rowimage.Key
// form) and the row number (uint64, big endian); then the fences: the hash
// of the first record of every block of b records. A lookup reads the
// fences once, then one block per key.
const (
	keyMapMagic  = "DBTKMAP2"
	keyMapHeader = len(keyMapMagic) + 16
	keyRecord    = 24
	keyMapBlock  = 256
)

type keyRec [keyRecord]byte

func keyHash(key string) [16]byte {
	sum := sha256.Sum256([]byte(key))
	var h [16]byte
	copy(h[:], sum[:16])
	return h
}

// keyMapPath returns where the key map of tf lives, or "" when tf has no
// digest or the engine keeps no key maps.
func (e *Engine) keyMapPath(tf TableFile) string {
	if e.keyMaps == "" || !digest.ValidSHA256(tf.SHA256) {
		return ""
	}
	return filepath.Join(e.keyMaps, tf.SHA256+".keys")
}

// buildKeyMap reads the table file (checking its sha256) and writes its key
// map to path, crash-safely.
func buildKeyMap(tf TableFile, path string) error {
	f, err := os.Open(tf.Path)
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return err
	}
	f.Close()
	if got := hex.EncodeToString(h.Sum(nil)); got != tf.SHA256 {
		return &snapshot.DigestError{File: tf.Path, WantSHA256: tf.SHA256, GotSHA256: got}
	}
	r, err := snapshot.OpenTableFile(tf.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	def := r.Table()
	idx, err := def.KeyIndexes()
	if err != nil {
		return err
	}
	recs := make([]keyRec, 0, r.Footer().Rows)
	var buf []byte
	for row := uint64(0); ; row++ {
		vals, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if buf, err = appendKey(buf[:0], def, idx, vals); err != nil {
			return fmt.Errorf("%s row %d: %w", tf.Path, row, err)
		}
		var rec keyRec
		sum := sha256.Sum256(buf)
		copy(rec[:16], sum[:16])
		binary.BigEndian.PutUint64(rec[16:], row)
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b keyRec) int { return bytes.Compare(a[:], b[:]) })
	if err := os.MkdirAll(filepath.Dir(path), filemode.Dir()); err != nil {
		return err
	}
	return atomicfile.Write(path, filemode.File(), func(w io.Writer) error {
		hdr := binary.BigEndian.AppendUint64([]byte(keyMapMagic), uint64(len(recs)))
		hdr = binary.BigEndian.AppendUint64(hdr, keyMapBlock)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		for i := range recs {
			if _, err := w.Write(recs[i][:]); err != nil {
				return err
			}
		}
		for i := 0; i < len(recs); i += keyMapBlock {
			if _, err := w.Write(recs[i][:16]); err != nil {
				return err
			}
		}
		return nil
	})
}

// appendKey appends the key string of a row in TableReader.Next's form:
// rowimage.Key's "[v1,v2]" of the canonical key values.
func appendKey(dst []byte, def *schema.Table, idx []int, vals []rowimage.Cell) ([]byte, error) {
	dst = append(dst, '[')
	for n, j := range idx {
		if n > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = rowimage.AppendSQLValue(dst, &def.Columns[j], vals[j]); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// keyMap is an opened key map: its fences in memory, its records read a
// block at a time.
type keyMap struct {
	f      *os.File
	n      int
	fences [][16]byte
	block  []byte
}

// openKeyMap opens the key map at path, building it first when missing.
func openKeyMap(tf TableFile, path string) (*keyMap, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := buildKeyMap(tf, path); err != nil {
			return nil, fmt.Errorf("build key map of %s: %w", tf.Path, err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := readKeyMapIndex(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("key map %s: %w", path, err)
	}
	return m, nil
}

// readKeyMapIndex checks the header and size and reads the fences.
func readKeyMapIndex(f *os.File) (*keyMap, error) {
	hdr := make([]byte, keyMapHeader)
	if _, err := f.ReadAt(hdr, 0); err != nil || string(hdr[:len(keyMapMagic)]) != keyMapMagic {
		return nil, fmt.Errorf("bad header (%v)", err)
	}
	n := binary.BigEndian.Uint64(hdr[len(keyMapMagic):])
	b := binary.BigEndian.Uint64(hdr[len(keyMapMagic)+8:])
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if b != keyMapBlock {
		return nil, fmt.Errorf("block size %d", b)
	}
	nf := (n + b - 1) / b
	if uint64(st.Size()) != uint64(keyMapHeader)+n*keyRecord+nf*16 {
		return nil, fmt.Errorf("%d bytes for %d records", st.Size(), n)
	}
	raw := make([]byte, nf*16)
	if _, err := f.ReadAt(raw, int64(keyMapHeader)+int64(n)*keyRecord); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	m := &keyMap{f: f, n: int(n), fences: make([][16]byte, nf), block: make([]byte, keyMapBlock*keyRecord)}
	for i := range m.fences {
		copy(m.fences[i][:], raw[i*16:])
	}
	return m, nil
}

func (m *keyMap) Close() error { return m.f.Close() }

// rows appends the row numbers of key to dst, reading the blocks that can
// hold its hash.
func (m *keyMap) rows(dst []int64, key string) ([]int64, error) {
	h := keyHash(key)
	// The first block whose fence is >= h; equal hashes may start in the
	// block before it.
	b := sort.Search(len(m.fences), func(i int) bool { return bytes.Compare(m.fences[i][:], h[:]) >= 0 })
	for b = max(b-1, 0); b < len(m.fences); b++ {
		first := b * keyMapBlock
		cnt := min(keyMapBlock, m.n-first)
		buf := m.block[:cnt*keyRecord]
		if _, err := m.f.ReadAt(buf, int64(keyMapHeader)+int64(first)*keyRecord); err != nil && !errors.Is(err, io.EOF) {
			return dst, err
		}
		for i := 0; i < cnt; i++ {
			switch c := bytes.Compare(buf[i*keyRecord:i*keyRecord+16], h[:]); {
			case c == 0:
				dst = append(dst, int64(binary.BigEndian.Uint64(buf[i*keyRecord+16:])))
			case c > 0:
				return dst, nil
			}
		}
	}
	return dst, nil
}

// staleRowsByMap is staleRows through the table file's key map: the
// distinct changed keys of the window, looked up one by one.
func (e *Engine) staleRowsByMap(ctx context.Context, tf TableFile, path string, w *Window, fn func(int64) error) error {
	m, err := openKeyMap(tf, path)
	if err != nil {
		return err
	}
	defer m.Close()
	eff, err := readParquet(w.File.Path, false)
	if err != nil {
		return err
	}
	rows, err := e.db.QueryContext(ctx, fmt.Sprintf("SELECT DISTINCT %s FROM %s", quoteIdent(w.File.KeyCol), eff))
	if err != nil {
		return err
	}
	defer rows.Close()
	var stale []int64
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return err
		}
		if stale, err = m.rows(stale, k); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.Sort(stale)
	for i, r := range stale {
		if i > 0 && stale[i-1] == r {
			continue
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
