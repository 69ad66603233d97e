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
	"time"
)

// Lease is the capture lease of one source: GET_LOCK('dbtrail.capture.<source>')
// held by a connection of its own. The server frees it when that connection
// ends, so a capturer that dies loses the lease and a waiting one takes over.
// The lease connection runs with wait_timeout = 120 s and a goroutine pings it
// every 15 s: a capturer that hangs or is cut off from the index loses the
// lease within about two minutes, a live one keeps it without doing anything.
// Methods are safe for concurrent use.
type Lease struct {
	db     *sql.DB
	conn   *sql.Conn
	name   string
	connID int64
	stop   chan struct{}
	wg     sync.WaitGroup

	mu   sync.Mutex
	done bool
	lost error // set when a keepalive ping failed
}

// Lease connection timing: the server drops a silent lease connection (and
// so the lease) after leaseIdleTimeout; the keepalive pings well within it.
const (
	leaseIdleTimeout  = 120 // seconds, the lease connection's wait_timeout
	leasePingDeadline = 10 * time.Second
)

// leaseKeepalive is the ping interval (a variable for tests).
var leaseKeepalive = 15 * time.Second

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
// the lease is found held by someone else. The lease is kept until Release or
// until its connection ends.
func (s *Store) AcquireLease(ctx context.Context, source string, onWait func()) (*Lease, error) {
	return s.acquireLease(ctx, source, onWait, -1)
}

// TryLease takes the capture lease of source like AcquireLease, but gives
// up once it has waited wait (at least one attempt is made): the error then
// wraps ErrLeaseHeld and names the connection that holds the lease.
// reindex takes the lease with it (see UnfinishedReindexError).
func (s *Store) TryLease(ctx context.Context, source string, wait time.Duration) (*Lease, error) {
	return s.acquireLease(ctx, source, nil, max(wait, 0))
}

// acquireLease is AcquireLease waiting at most wait, forever when wait < 0.
func (s *Store) acquireLease(ctx context.Context, source string, onWait func(), wait time.Duration) (*Lease, error) {
	if source == "" {
		return nil, errors.New("acquire lease: empty source")
	}
	name := leaseName(source)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	fail := func(err error) (*Lease, error) {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // never back to the pool
		conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET SESSION wait_timeout = %d", leaseIdleTimeout)); err != nil {
		return fail(err)
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return fail(err)
	}
	start := time.Now()
	waited := false
	for {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 2)", name).Scan(&got); err != nil {
			return fail(err)
		}
		if got.Valid && got.Int64 == 1 {
			break
		}
		if !waited {
			waited = true
			if onWait != nil {
				onWait()
			}
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if wait >= 0 && time.Since(start) >= wait {
			var holder sql.NullInt64
			if err := conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&holder); err != nil {
				return fail(err)
			}
			return fail(fmt.Errorf("held by connection %d: %w", holder.Int64, ErrLeaseHeld))
		}
	}
	l := &Lease{db: s.db, conn: conn, name: name, connID: id, stop: make(chan struct{})}
	l.wg.Add(1)
	go l.keepalive()
	return l, nil
}

// keepalive pings the lease connection until Release.
func (l *Lease) keepalive() {
	defer l.wg.Done()
	t := time.NewTicker(leaseKeepalive)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), leasePingDeadline)
		err := l.check(ctx, l.conn)
		cancel()
		if err != nil {
			l.mu.Lock()
			l.lost = err
			l.mu.Unlock()
			return
		}
	}
}

// Name returns the lock name.
func (l *Lease) Name() string { return l.name }

// ConnID returns the server connection id that holds the lock.
func (l *Lease) ConnID() int64 { return l.connID }

// Check verifies the lease is still held by our connection: IS_USED_LOCK(name)
// = ConnID(), asked over the pool (so a cancelled ctx cannot harm the lease
// connection). It returns an error wrapping ErrLeaseLost when the lock is free
// or held by another connection, after a failed keepalive, or after Release;
// other errors (the index unreachable, ctx done) are returned as they are:
// the lease may still be held.
func (l *Lease) Check(ctx context.Context) error {
	l.mu.Lock()
	done, lost := l.done, l.lost
	l.mu.Unlock()
	if done {
		return fmt.Errorf("lease %s: released: %w", l.name, ErrLeaseLost)
	}
	if lost != nil {
		if errors.Is(lost, ErrLeaseLost) {
			return lost
		}
		return fmt.Errorf("lease %s: keepalive failed: %w: %w", l.name, ErrLeaseLost, lost)
	}
	return l.check(ctx, l.db)
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
	if l.done {
		l.mu.Unlock()
		return nil
	}
	l.done = true
	l.mu.Unlock()
	close(l.stop)
	l.wg.Wait()
	_, err := l.conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", l.name)
	// The connection never goes back to the pool (its wait_timeout is short);
	// closing it frees the lock too, should RELEASE_LOCK have failed.
	l.conn.Raw(func(any) error { return driver.ErrBadConn })
	l.conn.Close()
	if err != nil {
		return fmt.Errorf("release lease %s: %w", l.name, err)
	}
	return nil
}
