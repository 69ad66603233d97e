package archive

import (
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/cespare/xxhash/v2"
	"github.com/dbtrail/dbtrail/internal/change"
)

// Row group bounds: the Writer cuts a row group at the end of each table's
// events, or when it holds DefaultRowGroupRows events or about
// DefaultRowGroupBytes of their variable-length fields, whichever comes
// first.
const (
	DefaultRowGroupRows  = 64 * 1024
	DefaultRowGroupBytes = 16 << 20
)

// WriterOptions tune a Writer. The zero value is the default. The same
// options must be used for a file to be rewritten byte for byte.
type WriterOptions struct {
	// RowGroupRows and RowGroupBytes bound a row group, and with it the
	// Writer's memory. Defaults DefaultRowGroupRows and
	// DefaultRowGroupBytes.
	RowGroupRows  int
	RowGroupBytes int
	// ZstdLevel is the zstd compression level; 0 is the codec's default.
	ZstdLevel int
}

// WriteResult describes a closed archive file.
type WriteResult struct {
	Footer    Footer
	RowGroups int
	Bytes     int64 // bytes written to the io.Writer
}

// EventError reports an event the Writer refuses. The event is not written
// and the Writer stays usable.
type EventError struct {
	Seq           uint64
	Schema, Table string
	Reason        string
}

func (e *EventError) Error() string {
	return fmt.Sprintf("archive event seq %d of %s.%s: %s", e.Seq, e.Schema, e.Table, e.Reason)
}

// Writer writes the archive file of one source-hour: one Parquet file whose
// rows are the hour's events ordered by (schema, table, seq). Events must be
// appended in that order (index.Store.HourEvents reads them so); the Writer
// checks it and never reorders. Its memory is bounded by one row group (see
// WriterOptions: the events' bytes once in the group, once more at most
// while a column is encoded and compressed) plus the footer metadata of the
// row groups written so far, a few KiB each. The bytes it writes depend only
// on the source, the hour, the options and the events (and this build of
// dbtrail): the same events give the same file. A Writer is not safe for
// concurrent use.
type Writer struct {
	source string
	hour   time.Time
	hourID uint32
	opts   WriterOptions
	out    *digestWriter
	pw     *file.Writer
	g      *group
	footer Footer
	groups []rowGroupEntry
	err    error // sticky: a failed write ends the Writer
	closed bool
}

// NewWriter starts the archive file of source's events committed in the
// hour starting at hour (which must be the start of a UTC hour) on w. It
// writes the Parquet magic at once; w is never closed by the Writer.
func NewWriter(w io.Writer, source string, hour time.Time, opts WriterOptions) (*Writer, error) {
	if source == "" {
		return nil, errors.New("archive writer: empty source name")
	}
	hour = hour.UTC()
	if !hour.Equal(hour.Truncate(time.Hour)) {
		return nil, fmt.Errorf("archive writer %s: %s is not the start of an hour", source, hour.Format(time.RFC3339Nano))
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = DefaultRowGroupBytes
	}
	sc, err := fileSchema()
	if err != nil {
		return nil, err
	}
	out := &digestWriter{w: w, h: xxhash.New()}
	pw, err := file.NewParquetWriterWithError(out, sc, file.WithWriterProps(writerProperties(opts)))
	if err != nil {
		return nil, fmt.Errorf("archive writer %s %s: %w", source, hour.Format(time.RFC3339), err)
	}
	return &Writer{
		source: source, hour: hour, hourID: change.HourID(hour), opts: opts, out: out, pw: pw,
		g:      newGroup(opts.RowGroupRows),
		footer: Footer{WriterVersion: WriterVersion, Source: source, Hour: hour},
	}, nil
}

// Append adds one event. Events must come in (schema, table, seq) order,
// byte-wise on the names, seq strictly growing within a table, and a table
// once left never comes back. An event out of order, committed outside the
// file's hour, with a commit time finer than a microsecond, seq 0, an
// unknown op, or text that is not UTF-8 is refused with an *EventError. GTID
// and PKBefore "" are stored as NULL, Before and After nil as NULL (an empty
// non-nil image stays empty). e is not retained.
func (w *Writer) Append(e *change.Event) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("archive writer: append after close")
	}
	newTable, err := w.check(e)
	if err != nil {
		return err
	}
	size := eventBytes(e)
	if w.g.rows > 0 && (newTable || w.g.rows >= w.opts.RowGroupRows || w.g.bytes+size > w.opts.RowGroupBytes) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if newTable {
		w.footer.Tables = append(w.footer.Tables, TableCount{Schema: e.Schema, Table: e.Table, FirstSeq: e.Seq})
	}
	t := &w.footer.Tables[len(w.footer.Tables)-1]
	t.Events++
	t.LastSeq = e.Seq
	if w.footer.Events == 0 || e.Seq < w.footer.FirstSeq {
		w.footer.FirstSeq = e.Seq
	}
	w.footer.LastSeq = max(w.footer.LastSeq, e.Seq)
	w.footer.Events++
	w.g.add(e, size)
	return nil
}

// check validates e against the file and the event before it, and reports
// whether e starts a new table.
func (w *Writer) check(e *change.Event) (newTable bool, err error) {
	fail := func(format string, args ...any) (bool, error) {
		return false, &EventError{Seq: e.Seq, Schema: e.Schema, Table: e.Table, Reason: fmt.Sprintf(format, args...)}
	}
	var prev *TableCount
	if n := len(w.footer.Tables); n > 0 {
		prev = &w.footer.Tables[n-1]
	}
	switch {
	case prev == nil || e.Schema > prev.Schema || (e.Schema == prev.Schema && e.Table > prev.Table):
		newTable = true
		if !utf8.ValidString(e.Schema) || !utf8.ValidString(e.Table) {
			return fail("schema or table name is not UTF-8")
		}
	case e.Schema != prev.Schema || e.Table != prev.Table:
		return fail("comes after table %s.%s: events must be in (schema, table, seq) order", prev.Schema, prev.Table)
	case e.Seq <= prev.LastSeq:
		return fail("comes after seq %d of the same table: events must be in (schema, table, seq) order", prev.LastSeq)
	}
	switch {
	case e.Seq == 0:
		return fail("seq 0")
	case !e.Op.Valid():
		return fail("unknown op %q", byte(e.Op))
	case change.HourID(e.CommitTime) != w.hourID || e.CommitTime.Before(w.hour):
		return fail("commit time %s is outside the hour %s", e.CommitTime.UTC().Format(time.RFC3339Nano), w.hour.Format(time.RFC3339))
	case e.CommitTime.Nanosecond()%1000 != 0:
		return fail("commit time %s is finer than a microsecond", e.CommitTime.UTC().Format(time.RFC3339Nano))
	}
	if name := invalidText(e, w.g.knownText(e)); name != "" {
		return fail("%s is not UTF-8", name)
	}
	return newTable, nil
}

// invalidText names the first text of e that is not UTF-8, "" when all
// are. The binlog file and GTID are skipped when known: those of the
// previous row, already checked.
func invalidText(e *change.Event, known bool) string {
	switch {
	case !known && !utf8.ValidString(e.BinlogFile):
		return "binlog file"
	case !known && !utf8.ValidString(e.GTID):
		return "gtid"
	case !utf8.ValidString(e.PK):
		return "pk"
	case !utf8.ValidString(e.PKBefore):
		return "pk_before"
	case !utf8.Valid(e.Before):
		return "before image"
	case !utf8.Valid(e.After):
		return "after image"
	}
	return ""
}

// eventBytes is what an event adds to a row group's byte bound.
func eventBytes(e *change.Event) int {
	return 48 + len(e.BinlogFile) + len(e.GTID) + len(e.PK) + len(e.PKBefore) + len(e.Before) + len(e.After)
}

// flush writes the buffered events as one row group and records its footer
// entry.
func (w *Writer) flush() error {
	if w.g.rows == 0 {
		return nil
	}
	entry, err := w.writeGroup()
	if err != nil {
		w.err = fmt.Errorf("archive writer %s %s: write row group %d: %w", w.source, w.hour.Format(time.RFC3339), len(w.groups), err)
		return w.err
	}
	w.groups = append(w.groups, entry)
	w.g.reset()
	return nil
}

// writeGroup writes the buffered row group column by column and returns its
// footer entry: its table, rows, seq range and the digest of its bytes.
func (w *Writer) writeGroup() (rowGroupEntry, error) {
	rg, err := w.pw.AppendRowGroupChecked()
	if err != nil {
		return rowGroupEntry{}, err
	}
	start := w.out.mark()
	for c := 0; c < numColumns; c++ {
		cw, err := rg.NextColumn()
		if err != nil {
			return rowGroupEntry{}, err
		}
		if err := w.g.writeColumn(c, cw); err != nil {
			return rowGroupEntry{}, fmt.Errorf("column %s: %w", columnDefs()[c].name, err)
		}
	}
	if err := rg.Close(); err != nil {
		return rowGroupEntry{}, err
	}
	return rowGroupEntry{
		Table: len(w.footer.Tables) - 1, Rows: int64(w.g.rows),
		FirstSeq: uint64(w.g.seq[0]), LastSeq: uint64(w.g.seq[w.g.rows-1]),
		Offset: start, Bytes: w.out.n - start, XXH64: fmt.Sprintf("%016x", w.out.h.Sum64()),
	}, nil
}

// Close writes the last row group and the footer (see the Key constants). It
// does not close the io.Writer. A Writer whose write failed cannot be closed
// successfully.
func (w *Writer) Close() (WriteResult, error) {
	if w.closed {
		return WriteResult{}, errors.New("archive writer: already closed")
	}
	w.closed = true
	if w.err != nil {
		return WriteResult{}, w.err
	}
	if err := w.flush(); err != nil {
		return WriteResult{}, err
	}
	fail := func(err error) (WriteResult, error) {
		return WriteResult{}, fmt.Errorf("archive writer %s %s: %w", w.source, w.hour.Format(time.RFC3339), err)
	}
	kv, err := w.footer.keyValues(w.groups)
	if err != nil {
		return fail(err)
	}
	for _, p := range kv {
		if err := w.pw.AppendKeyValueMetadata(p[0], p[1]); err != nil {
			return fail(fmt.Errorf("footer: %w", err))
		}
	}
	if err := w.pw.Close(); err != nil {
		return fail(fmt.Errorf("close: %w", err))
	}
	return WriteResult{Footer: w.footer, RowGroups: len(w.groups), Bytes: w.out.n}, nil
}

// digestWriter counts the bytes written and digests those since the last
// mark. It hides any Close method of w (the Parquet writer closes an
// io.Closer it writes to).
type digestWriter struct {
	w io.Writer
	n int64
	h *xxhash.Digest
}

func (d *digestWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	return n, err
}

// mark restarts the digest and returns the current offset.
func (d *digestWriter) mark() int64 {
	d.h.Reset()
	return d.n
}
