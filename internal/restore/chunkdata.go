package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// errLoadDataRefused is the target refusing LOAD DATA LOCAL INFILE (its
// local_infile is off): the loader goes on with INSERTs.
var errLoadDataRefused = errors.New("the target refuses LOAD DATA LOCAL INFILE")

// loadDataBlock is how many bytes of rows the builder hands to the
// driver at a time.
const loadDataBlock = 64 << 10

// localInfile reports whether the target accepts LOAD DATA LOCAL INFILE
// (its global local_infile is on). A target that cannot say is taken to
// refuse it: the load then uses INSERTs.
func localInfile(ctx context.Context, conn *sql.Conn) bool {
	var on sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL.local_infile").Scan(&on); err != nil {
		return false
	}
	return on.String == "1" || on.String == "ON"
}

// refusedLoadData reports whether err is the server refusing LOCAL
// INFILE: 1148 (ER_NOT_ALLOWED_COMMAND), 4166 (MariaDB's
// ER_LOAD_INFILE_CAPABILITY_DISABLED), 3948 (MySQL's
// ER_CLIENT_LOCAL_FILES_DISABLED).
func refusedLoadData(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1148 || me.Number == 4166 || me.Number == 3948)
}

// loadChunkData loads up to size rows of r into the load table inside tx
// with one LOAD DATA LOCAL INFILE statement (LoadData): the rows
// are encoded on another goroutine while the driver streams them to the
// server. It returns the rows sent and the last one's key. The server
// must report exactly the rows sent as loaded (a LOCAL load skips a
// duplicate key instead of failing), or the chunk fails. A target that
// refuses the statement is errLoadDataRefused: nothing is loaded, but r
// may have been read ahead.
func (l *loader) loadChunkData(ctx context.Context, tx *sql.Tx, r RowReader, order *KeyOrder, size int) (int, *string, error) {
	pr, pw := io.Pipe()
	name := fmt.Sprintf("dbtrail-restore-%p-%d", l, l.part.Chunks)
	mysql.RegisterReaderHandler(name, func() io.Reader { return pr })
	defer mysql.DeregisterReaderHandler(name)
	type built struct {
		n   int
		key *string
		err error
	}
	done := make(chan built, 1)
	go func() {
		n, key, err := l.encodeRows(r, order, size, pw)
		pw.CloseWithError(err) // nil: the driver reads io.EOF
		done <- built{n, key, err}
	}()
	res, err := tx.ExecContext(ctx, l.data.Statement(l.job.Schema, l.job.Load, "Reader::"+name))
	// A statement the server refused never asked for the rows: stop the builder.
	pr.CloseWithError(errLoadDataRefused)
	b := <-done
	switch {
	case err != nil && refusedLoadData(err):
		return 0, nil, errLoadDataRefused
	case b.err != nil && !errors.Is(b.err, io.ErrClosedPipe) && !errors.Is(b.err, errLoadDataRefused):
		return 0, nil, b.err
	case err != nil:
		return 0, nil, l.loadErr(b.n, err)
	case b.err != nil:
		return 0, nil, fmt.Errorf("target: load %d rows of %s part %d after its row %d: the server stopped reading them", b.n, l.job.Table.Key(), l.part.Part+1, l.part.RowsLoaded)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(b.n) {
		return 0, nil, fmt.Errorf("target: LOAD DATA of %d rows of %s part %d after its row %d into %s.%s loaded %d (a duplicate key?); the chunk is rolled back: %v",
			b.n, l.job.Table.Key(), l.part.Part+1, l.part.RowsLoaded, l.job.Schema, l.job.Load, got, err)
	}
	return b.n, b.key, nil
}

// encodeRows reads up to size rows of r and writes them to w as LOAD
// DATA lines, loadDataBlock bytes at a time; it returns the rows read and
// the last one's key.
func (l *loader) encodeRows(r RowReader, order *KeyOrder, size int, w io.Writer) (int, *string, error) {
	buf := make([]byte, 0, loadDataBlock+64<<10)
	n, key, err := l.readChunk(r, order, size, func(num int64, row []rowimage.Cell) (bool, error) {
		var err error
		if buf, err = l.data.AppendRow(buf, num, row); err != nil {
			return false, fail(KindBadInput, err)
		}
		if len(buf) >= loadDataBlock {
			if _, err := w.Write(buf); err != nil {
				return false, err
			}
			buf = buf[:0]
		}
		return true, nil
	})
	if err != nil {
		return n, nil, err
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			return n, nil, err
		}
	}
	return n, key, nil
}
