package archive

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// CorruptError reports an archive file that cannot be trusted: truncated,
// altered, or not an archive file of WriterVersion. File is the name the
// Reader was given.
type CorruptError struct {
	File string
	Err  error // what is wrong
}

func (e *CorruptError) Error() string { return fmt.Sprintf("archive %s: %v", e.File, e.Err) }

func (e *CorruptError) Unwrap() error { return e.Err }

// Reader reads an archive file. NewReader checks the whole footer, so a
// truncated file or a damaged footer is refused before any event is read.
// Each row group is read whole and checked against the digest the footer
// keeps for it before any of its events is decoded: no event ever comes from
// altered bytes. A scan that reaches a damaged row group stops there with a
// *CorruptError, after the events of the intact row groups before it; call
// Verify first to have all or nothing. A Reader reads only the byte ranges of
// the footer and of the row groups a scan needs. It holds one row group's
// compressed bytes at a time and is not safe for concurrent use.
type Reader struct {
	name   string
	src    *source
	pf     *file.Reader
	footer Footer
	groups []rowGroupEntry
	buf    []byte // the row group being read
}

// NewReader opens the archive file of size bytes that r reads; name is used
// in errors. It reads and validates the footer: the Parquet footer and
// schema, the writer version, the hour, counts and seq ranges of the file,
// of every table and of every row group, and that the row groups' column
// chunks tile exactly the byte ranges their digests cover. A file that fails
// any check is a *CorruptError; an error of r is returned wrapped as it is.
func NewReader(r io.ReaderAt, size int64, name string) (*Reader, error) {
	src := &source{r: r, size: size}
	rd := &Reader{name: name, src: src}
	pf, err := openParquet(src)
	if err != nil {
		return nil, rd.fail(err)
	}
	rd.pf = pf
	md := pf.MetaData()
	want, err := fileSchema()
	if err != nil {
		return nil, err
	}
	if !md.Schema.Equals(schema.NewSchema(want)) {
		return nil, rd.corrupt(errors.New("schema is not the archive schema"))
	}
	if rd.footer, rd.groups, err = parseFooter(md.KeyValueMetadata()); err != nil {
		return nil, rd.corrupt(err)
	}
	if err := validate(md, &rd.footer, rd.groups, size-8-int64(md.Size())); err != nil {
		return nil, rd.corrupt(err)
	}
	src.locked = true
	return rd, nil
}

// openParquet parses the Parquet footer; a panic of the parser on garbage
// is an error.
func openParquet(src *source) (pf *file.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("footer: %v", p)
		}
	}()
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	pf, err = file.NewParquetReader(src, file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	return pf, nil
}

// Footer returns the file's footer.
func (r *Reader) Footer() Footer {
	f := r.footer
	f.Tables = append([]TableCount(nil), f.Tables...)
	return f
}

// fail turns err into a *CorruptError unless it is an I/O error of the
// underlying io.ReaderAt.
func (r *Reader) fail(err error) error {
	if r.src.ioErr != nil {
		ioErr := r.src.ioErr
		r.src.ioErr = nil
		return fmt.Errorf("read archive %s: %w", r.name, ioErr)
	}
	return r.corrupt(err)
}

func (r *Reader) corrupt(err error) error { return &CorruptError{File: r.name, Err: err} }

// source is the Parquet library's view of the file. Until the footer is
// validated it reads through to the file; after that (locked) it serves
// reads only from the window, the row group whose digest was just checked,
// and refuses anything else.
type source struct {
	r      io.ReaderAt
	size   int64
	pos    int64
	locked bool
	win    []byte
	winOff int64
	ioErr  error // the last error of r other than a short file
}

func (s *source) ReadAt(p []byte, off int64) (int, error) {
	if s.locked {
		if off < s.winOff || off+int64(len(p)) > s.winOff+int64(len(s.win)) {
			return 0, fmt.Errorf("read of %d bytes at offset %d outside the checked row group", len(p), off)
		}
		return copy(p, s.win[off-s.winOff:]), nil
	}
	return s.readAt(p, off)
}

// readAt reads len(p) bytes at off from the file. The file ending before
// size is reported as truncation; other errors of r are kept in ioErr.
func (s *source) readAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > s.size {
		return 0, fmt.Errorf("read of %d bytes at offset %d past the end of the file (%d bytes)", len(p), off, s.size)
	}
	n, err := s.r.ReadAt(p, off)
	if n == len(p) {
		return n, nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, fmt.Errorf("file ends at offset %d, before the %d bytes it should have", off+int64(n), s.size)
	}
	s.ioErr = err
	return n, err
}

func (s *source) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += s.pos
	case io.SeekEnd:
		offset += s.size
	default:
		return 0, fmt.Errorf("seek: bad whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("seek to negative offset %d", offset)
	}
	s.pos = offset
	return offset, nil
}
