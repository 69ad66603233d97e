package exactfloat

import (
	"bufio"
	"bytes"
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// A fix file holds, sorted, one record per row key that has a FLOAT value
// to fix: the first 16 bytes of the sha256 of the key (rowimage.Key form), then
// per FLOAT column of the plan the float32's bits (big endian), or keepBits
// where the dumped value already reads back exactly.
//
// Format: the magic fileMagic, the record count n (uint64), the FLOAT column
// count and the block size b (uint32 each), all big endian; the n records;
// then the fences: the hash of the first record of every block of b
// records. A lookup holds the fences and reads one block.
const (
	fileMagic  = "DBTFLT01"
	fileHeader = len(fileMagic) + 16
	hashLen    = 16
	fileBlock  = 256
	// keepBits marks a value the dump already holds exactly: a NaN, which
	// no FLOAT column can hold.
	keepBits = 0x7fc0ffff
	// runRecords bounds the records a Writer holds before it writes a
	// sorted run to its scratch folder (about 20 MiB with one FLOAT).
	runRecords = 1 << 20
)

type keyHash [hashLen]byte

func hashKey(key []byte) keyHash {
	sum := sha256.Sum256(key)
	var h keyHash
	copy(h[:], sum[:hashLen])
	return h
}

// Writer builds a fix file with bounded memory: records are sorted in runs
// of runRecords, written to its scratch folder, and merged by Finish.
// Overrides (the rows changed after the source was read) are held in memory.
type Writer struct {
	nf       int
	runMax   int // records per run
	scratch  string
	recs     []byte // unsorted records of the current run
	runs     []string
	override map[keyHash][]byte // record, or nil: the key has no fix
}

// NewWriter returns a Writer of records with nf FLOAT values that keeps its
// runs in scratch (which must exist; Finish removes the runs).
func NewWriter(scratch string, nf int) *Writer {
	return &Writer{nf: nf, runMax: runRecords, scratch: scratch, override: map[keyHash][]byte{}}
}

func (w *Writer) recLen() int { return hashLen + 4*w.nf }

// record encodes key's values (nil = NULL) and reports whether any needs a
// fix.
func (w *Writer) record(key []byte, vals []*float32) ([]byte, bool) {
	rec := make([]byte, 0, w.recLen())
	h := hashKey(key)
	rec = append(rec, h[:]...)
	fix := false
	for _, v := range vals {
		bits := uint32(keepBits)
		if v != nil && NeedsFix(*v) {
			bits, fix = math.Float32bits(*v), true
		}
		rec = binary.BigEndian.AppendUint32(rec, bits)
	}
	return rec, fix
}

// Add records the exact FLOAT values (in plan order, nil = NULL) of the row
// with key, as the source holds them; a row none of whose values needs a
// fix is not kept. An Override of the same key wins, whenever it is made.
func (w *Writer) Add(key []byte, vals []*float32) error {
	if len(vals) != w.nf {
		return fmt.Errorf("%d FLOAT values for %d FLOAT columns", len(vals), w.nf)
	}
	rec, fix := w.record(key, vals)
	if !fix {
		return nil
	}
	w.recs = append(w.recs, rec...)
	if len(w.recs) >= w.runMax*w.recLen() {
		return w.spill()
	}
	return nil
}

// Override sets the values of key at the dump: vals in plan order, or
// present false when the row did not exist then.
func (w *Writer) Override(key []byte, vals []*float32, present bool) error {
	h := hashKey(key)
	if !present {
		w.override[h] = nil
		return nil
	}
	if len(vals) != w.nf {
		return fmt.Errorf("%d FLOAT values for %d FLOAT columns", len(vals), w.nf)
	}
	rec, fix := w.record(key, vals)
	if !fix {
		rec = nil
	}
	w.override[h] = rec
	return nil
}

// spill sorts the current run and writes it to the scratch folder.
func (w *Writer) spill() error {
	w.sortRun(w.recs)
	path := filepath.Join(w.scratch, "run"+strconv.Itoa(len(w.runs)))
	if err := os.WriteFile(path, w.recs, 0o600); err != nil {
		return fmt.Errorf("write fix run: %w", err)
	}
	w.runs = append(w.runs, path)
	w.recs = w.recs[:0]
	return nil
}

func (w *Writer) sortRun(recs []byte) {
	n := w.recLen()
	sort.Sort(&recSorter{b: recs, n: n, tmp: make([]byte, n)})
}

// Finish merges the runs, drops the records of overridden keys, adds the
// overrides with a fix, writes the fix file to path and removes the runs.
// It returns the number of records written.
func (w *Writer) Finish(path string) (n int64, err error) {
	defer func() {
		for _, r := range w.runs {
			os.Remove(r)
		}
	}()
	// The last run, in memory: what was added since the last spill, less
	// the overridden keys, and the overrides with a fix.
	size := w.recLen()
	last := make([]byte, 0, len(w.recs))
	for i := 0; i < len(w.recs); i += size {
		if _, ok := w.override[keyHash(w.recs[i:i+hashLen])]; !ok {
			last = append(last, w.recs[i:i+size]...)
		}
	}
	for _, rec := range w.override {
		last = append(last, rec...)
	}
	w.recs = nil
	w.sortRun(last)
	srcs := make([]*runReader, 0, len(w.runs)+1)
	for _, r := range w.runs {
		f, err := os.Open(r)
		if err != nil {
			return 0, fmt.Errorf("open fix run: %w", err)
		}
		defer f.Close()
		srcs = append(srcs, &runReader{r: bufio.NewReaderSize(f, 1<<16), filter: true})
	}
	srcs = append(srcs, &runReader{r: bytes.NewReader(last)})
	return w.merge(path, srcs)
}

// merge writes the fix file from sorted sources, skipping the records of
// overridden keys in the filtered ones (the spilled runs).
func (w *Writer) merge(path string, srcs []*runReader) (int64, error) {
	f, err := filemode.Create(path)
	if err != nil {
		return 0, fmt.Errorf("create fix file: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<16)
	if _, err := bw.Write(make([]byte, fileHeader)); err != nil {
		return 0, err
	}
	h := &runHeap{}
	for _, s := range srcs {
		s.rec = make([]byte, w.recLen())
		ok, err := s.next(w.override)
		if err != nil {
			return 0, err
		}
		if ok {
			heap.Push(h, s)
		}
	}
	var n int64
	var fences []byte
	for h.Len() > 0 {
		s := (*h)[0]
		if n%fileBlock == 0 {
			fences = append(fences, s.rec[:hashLen]...)
		}
		if _, err := bw.Write(s.rec); err != nil {
			return 0, fmt.Errorf("write fix file: %w", err)
		}
		n++
		ok, err := s.next(w.override)
		if err != nil {
			return 0, err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	if _, err := bw.Write(fences); err != nil {
		return 0, fmt.Errorf("write fix file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write fix file: %w", err)
	}
	hdr := binary.BigEndian.AppendUint64([]byte(fileMagic), uint64(n))
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(w.nf))
	hdr = binary.BigEndian.AppendUint32(hdr, fileBlock)
	if _, err := f.WriteAt(hdr, 0); err != nil {
		return 0, fmt.Errorf("write fix file: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("write fix file: %w", err)
	}
	return n, nil
}

// runReader reads the records of one sorted run.
type runReader struct {
	r      io.Reader
	rec    []byte
	filter bool // skip records of overridden keys
}

func (s *runReader) next(override map[keyHash][]byte) (bool, error) {
	for {
		if _, err := io.ReadFull(s.r, s.rec); err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, fmt.Errorf("read fix run: %w", err)
		}
		if !s.filter {
			return true, nil
		}
		if _, ok := override[keyHash(s.rec[:hashLen])]; !ok {
			return true, nil
		}
	}
}

type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return bytes.Compare(h[i].rec, h[j].rec) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// recSorter sorts fixed-size records in place, bytewise.
type recSorter struct {
	b   []byte
	n   int
	tmp []byte
}

func (s *recSorter) Len() int { return len(s.b) / s.n }
func (s *recSorter) Less(i, j int) bool {
	return bytes.Compare(s.b[i*s.n:(i+1)*s.n], s.b[j*s.n:(j+1)*s.n]) < 0
}
func (s *recSorter) Swap(i, j int) {
	a, b := s.b[i*s.n:(i+1)*s.n], s.b[j*s.n:(j+1)*s.n]
	copy(s.tmp, a)
	copy(a, b)
	copy(b, s.tmp)
}

// Fixes is an opened fix file: its fences in memory, a block read per
// lookup. It is not safe for concurrent use.
type Fixes struct {
	f      *os.File
	n      int
	nf     int
	fences []keyHash
	block  []byte
}

// Open opens the fix file at path, whose records must hold nf FLOAT values.
func Open(path string, nf int) (*Fixes, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open fix file: %w", err)
	}
	x, err := readIndex(f, nf)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("fix file %s: %w", path, err)
	}
	return x, nil
}

// readIndex checks the header and size and reads the fences.
func readIndex(f *os.File, nf int) (*Fixes, error) {
	hdr := make([]byte, fileHeader)
	if _, err := f.ReadAt(hdr, 0); err != nil || string(hdr[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("bad header (%v)", err)
	}
	n := binary.BigEndian.Uint64(hdr[len(fileMagic):])
	gotNF := binary.BigEndian.Uint32(hdr[len(fileMagic)+8:])
	b := binary.BigEndian.Uint32(hdr[len(fileMagic)+12:])
	if int(gotNF) != nf || b != fileBlock {
		return nil, fmt.Errorf("%d FLOAT columns in blocks of %d, want %d in blocks of %d", gotNF, b, nf, fileBlock)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	rec := uint64(hashLen + 4*nf)
	nfences := (n + fileBlock - 1) / fileBlock
	if uint64(st.Size()) != uint64(fileHeader)+n*rec+nfences*hashLen {
		return nil, fmt.Errorf("%d bytes for %d records", st.Size(), n)
	}
	raw := make([]byte, nfences*hashLen)
	if _, err := f.ReadAt(raw, int64(fileHeader)+int64(n*rec)); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	x := &Fixes{f: f, n: int(n), nf: nf, fences: make([]keyHash, nfences), block: make([]byte, fileBlock*int(rec))}
	for i := range x.fences {
		copy(x.fences[i][:], raw[i*hashLen:])
	}
	return x, nil
}

// Len returns the number of rows with a fix.
func (x *Fixes) Len() int { return x.n }

// Close closes the file.
func (x *Fixes) Close() error { return x.f.Close() }

// Find looks key up and returns its exact values in plan order, appended to
// dst[:0] as float32 bits, or bits for which Keep is true where the dumped
// value stands.
// ok is false when the key has no fix.
func (x *Fixes) Find(dst []uint32, key []byte) (vals []uint32, ok bool, err error) {
	dst = dst[:0]
	if x.n == 0 {
		return dst, false, nil
	}
	h := hashKey(key)
	rec := hashLen + 4*x.nf
	// Records are unique by hash: the one sought is in the last block whose
	// fence is <= h.
	b := sort.Search(len(x.fences), func(i int) bool { return bytes.Compare(x.fences[i][:], h[:]) > 0 }) - 1
	if b < 0 {
		return dst, false, nil
	}
	first := b * fileBlock
	cnt := min(fileBlock, x.n-first)
	buf := x.block[:cnt*rec]
	if _, err := x.f.ReadAt(buf, int64(fileHeader)+int64(first*rec)); err != nil && !errors.Is(err, io.EOF) {
		return dst, false, fmt.Errorf("read fix file: %w", err)
	}
	lo, hi := 0, cnt
	for lo < hi {
		m := (lo + hi) / 2
		switch c := bytes.Compare(buf[m*rec:m*rec+hashLen], h[:]); {
		case c == 0:
			for k := 0; k < x.nf; k++ {
				dst = append(dst, binary.BigEndian.Uint32(buf[m*rec+hashLen+4*k:]))
			}
			return dst, true, nil
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return dst, false, nil
}

// Keep reports whether bits (a value Find returned) marks a value the dump
// already holds exactly.
func Keep(bits uint32) bool { return bits == keepBits }
