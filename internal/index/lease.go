package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// Lease is the capture lease of one source: GET_LOCK('dbtrail.capture.<source>')
// held by a connection of its own. The server frees it when that connection
// ends, so a capturer that dies or loses its connection loses the lease, and a
// waiting one takes over. Methods are safe for concurrent use.
type Lease struct {
	mu     sync.Mutex
	conn   *sql.Conn
	name   string
	connID int64
	done   bool
}

// leaseName returns the lock name of source's lease. Names longer than MySQL's
// 64-character limit are shortened with a digest.
func leaseName(source string) string {
	n := "dbtrail.capture." + source
	if len(n) <= 64 {
		return n
	}
	sum := sha256.Sum256([]byte(source))
	return "dbtrail.capture." + source[:15] + "~" + hex.EncodeToString(sum[:16])
}

// AcquireLease takes the capture lease of source on a dedicated connection,
// retrying GET_LOCK(name, 2) until it is obtained or ctx is done (then the
// error wraps ctx.Err()). onWait, if not nil, is called once, the first time
// the lease is found held by someone else.
func (s *Store) AcquireLease(ctx context.Context, source string, onWait func()) (*Lease, error) {
	if source == "" {
		return nil, errors.New("acquire lease: empty source")
	}
	name := leaseName(source)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	// An idle lease connection must not be closed by the server (that would
	// free the lease): take the longest wait_timeout there is.
	if _, err := conn.ExecContext(ctx, "SET SESSION wait_timeout = 31536000"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		conn.Close()
		return nil, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	waited := false
	for {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 2)", name).Scan(&got); err != nil {
			conn.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("acquire lease %s: %w", name, ctx.Err())
			}
			return nil, fmt.Errorf("acquire lease %s: %w", name, err)
		}
		if got.Valid && got.Int64 == 1 {
			return &Lease{conn: conn, name: name, connID: id}, nil
		}
		if !waited {
			waited = true
			if onWait != nil {
				onWait()
			}
		}
		if err := ctx.Err(); err != nil {
			conn.Close()
			return nil, fmt.Errorf("acquire lease %s: %w", name, err)
		}
	}
}

// Name returns the lock name.
func (l *Lease) Name() string { return l.name }

// ConnID returns the server connection id that holds the lock.
func (l *Lease) ConnID() int64 { return l.connID }

// Check verifies the lease is still held by our connection
// (IS_USED_LOCK(name) = ConnID()), asking over that same connection so it also
// stays alive. It returns an error wrapping ErrLeaseLost when the lock is gone
// or held by another connection, when our connection failed, or after
// Release; the error of a done ctx is returned as is.
func (l *Lease) Check(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return fmt.Errorf("lease %s: released: %w", l.name, ErrLeaseLost)
	}
	if err := l.check(ctx, l.conn); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.Is(err, ErrLeaseLost) {
			return fmt.Errorf("%w: %w", ErrLeaseLost, err)
		}
		return err
	}
	return nil
}

type rowQueryer interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// check asks q (any connection, or a transaction) who holds the lock.
func (l *Lease) check(ctx context.Context, q rowQueryer) error {
	var holder sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", l.name).Scan(&holder); err != nil {
		return fmt.Errorf("lease %s: %w", l.name, err)
	}
	if !holder.Valid {
		return fmt.Errorf("lease %s: free, we held it as connection %d: %w", l.name, l.connID, ErrLeaseLost)
	}
	if holder.Int64 != l.connID {
		return fmt.Errorf("lease %s: held by connection %d, not ours (%d): %w", l.name, holder.Int64, l.connID, ErrLeaseLost)
	}
	return nil
}

// Release frees the lease and its connection. Releasing twice is a no-op.
func (l *Lease) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	l.done = true
	_, err := l.conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", l.name)
	// Closing returns the connection to the pool; should RELEASE_LOCK have
	// failed, discard it so the server frees the lock with it.
	if err != nil {
		l.conn.Raw(func(any) error { return driver.ErrBadConn })
		l.conn.Close()
		return fmt.Errorf("release lease %s: %w", l.name, err)
	}
	// The long wait_timeout must not follow the connection into the pool.
	l.conn.ExecContext(context.Background(), "SET SESSION wait_timeout = DEFAULT")
	return l.conn.Close()
}
