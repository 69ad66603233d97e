package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/change"
)

// Dropping an hour's events once its archive is confirmed, and adding
// hourly partitions for past hours (reindex). Both serialize with
// EnsurePartitions on GET_LOCK('dbtrail.partitions').

// HourChangedError is DropPartition's refusal: the index holds another
// number of the hour's events than the archive file that was to replace
// them (an event landed in the hour meanwhile). Nothing was dropped.
type HourChangedError struct {
	Source    string
	Hour      uint32
	Want, Got int64
}

func (e *HourChangedError) Error() string {
	return fmt.Sprintf("hour %s of %s has %d events in the index, the archive holds %d of them: not dropped",
		change.HourTime(e.Hour).Format(time.RFC3339), e.Source, e.Got, e.Want)
}

// DropResult says how DropPartition removed an hour's events.
type DropResult struct {
	// Events is the hour's event count found under the lock.
	Events int64
	// Partition is the hourly partition dropped; "" when the hour's chunks
	// were deleted instead (Deleted rows): its partition also held other
	// rows (another source, a late event of an earlier hour), or the hour
	// has no partition of its own (p_before, p_future).
	Partition string
	Deleted   int64
}

// DropPartition removes the events of source committed in hour from the
// index, but only while they number exactly want (the events the confirmed
// archive file holds); otherwise it fails with a *HourChangedError and
// removes nothing. The count and the removal happen under LOCK TABLES
// event_chunks WRITE, so no event can land in the hour between them: the
// hour's own partition is dropped when it holds nothing else, else the
// hour's chunks of source are deleted. An hour without events is a no-op.
// Waiting for the table lock (behind capture's open transaction, a long
// read) is bounded like EnsurePartitions': 2 s per attempt, 10 attempts.
func (s *Store) DropPartition(ctx context.Context, source string, hour uint32, want int64) (DropResult, error) {
	var res DropResult
	fail := func(err error) (DropResult, error) {
		return res, fmt.Errorf("drop %s of %s: %w", PartitionName(hour), source, err)
	}
	err := s.withChunksLocked(ctx, func(conn *sql.Conn) error {
		if err := conn.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM event_chunks WHERE source = ? AND hour_id = ?`,
			source, hour).Scan(&res.Events); err != nil {
			return err
		}
		if res.Events != want {
			return &HourChangedError{Source: source, Hour: hour, Want: want, Got: res.Events}
		}
		if res.Events == 0 {
			return nil
		}
		alone, err := hourAlone(ctx, conn, source, hour)
		if err != nil {
			return err
		}
		if alone {
			if _, err := conn.ExecContext(ctx, "ALTER TABLE "+chunksTable+" DROP PARTITION "+PartitionName(hour)); err != nil {
				return err
			}
			res.Partition = PartitionName(hour)
			return nil
		}
		r, err := conn.ExecContext(ctx, `DELETE FROM event_chunks WHERE source = ? AND hour_id = ?`, source, hour)
		if err != nil {
			return err
		}
		res.Deleted, err = r.RowsAffected()
		return err
	})
	var hc *HourChangedError
	if errors.As(err, &hc) {
		return res, hc
	}
	if err != nil {
		return fail(err)
	}
	return res, nil
}

// hourAlone reports whether hour has a partition of its own holding only
// source's events of that hour.
func hourAlone(ctx context.Context, conn *sql.Conn, source string, hour uint32) (bool, error) {
	parts, err := listPartitions(ctx, conn)
	if err != nil {
		return false, err
	}
	name := PartitionName(hour)
	for _, p := range parts {
		if p.Name != name || !p.Hourly() || p.Hour != hour {
			continue
		}
		var other int
		err := conn.QueryRowContext(ctx, `SELECT 1 FROM event_chunks PARTITION (`+name+`)
			WHERE source <> ? OR hour_id <> ? LIMIT 1`, source, hour).Scan(&other)
		if errors.Is(err, sql.ErrNoRows) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// DropEmptyPartitions drops every hourly partition of an hour before
// before (an HourID) that holds no rows at all, under the same lock as
// DropPartition, and returns their names. Hours without traffic leave such
// partitions behind.
func (s *Store) DropEmptyPartitions(ctx context.Context, before uint32) ([]string, error) {
	var dropped []string
	err := s.withChunksLocked(ctx, func(conn *sql.Conn) error {
		parts, err := listPartitions(ctx, conn)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if !p.Hourly() || p.Hour >= before {
				continue
			}
			var one int
			err := conn.QueryRowContext(ctx, `SELECT 1 FROM event_chunks PARTITION (`+p.Name+`) LIMIT 1`).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				dropped = append(dropped, p.Name)
			} else if err != nil {
				return err
			}
		}
		if len(dropped) == 0 {
			return nil
		}
		_, err = conn.ExecContext(ctx, "ALTER TABLE "+chunksTable+" DROP PARTITION "+strings.Join(dropped, ", "))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("drop empty partitions before %s: %w", PartitionName(before), err)
	}
	return dropped, nil
}

// withChunksLocked runs fn on a connection holding GET_LOCK
// ('dbtrail.partitions') and LOCK TABLES event_chunks WRITE, both released
// after it.
func (s *Store) withChunksLocked(ctx context.Context, fn func(conn *sql.Conn) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	unlock, err := namedLock(ctx, conn, "dbtrail.partitions")
	if err != nil {
		return err
	}
	defer unlock()
	if err := execRetryingLockWait(ctx, conn, "LOCK TABLES "+chunksTable+" WRITE"); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), "UNLOCK TABLES")
	return fn(conn)
}

// MaxRestoredPartitions bounds how many hourly partitions SplitPartitions
// adds at once: MariaDB allows 8192 partitions per table. Older hours stay
// in p_before.
const MaxRestoredPartitions = 4096

// SplitPartitions gives every hour from from (an HourID) up to p_before's
// bound a partition of its own, splitting them off p_before (REORGANIZE
// PARTITION: rows already there move along). At most
// MaxRestoredPartitions hours get one, the newest; a from at or past
// p_before's bound is a no-op. reindex calls it before it restores
// hours older than the index.
func (s *Store) SplitPartitions(ctx context.Context, from uint32) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("split partitions: %w", err)
	}
	defer conn.Close()
	unlock, err := namedLock(ctx, conn, "dbtrail.partitions")
	if err != nil {
		return fmt.Errorf("split partitions: %w", err)
	}
	defer unlock()
	parts, err := listPartitions(ctx, conn)
	if err != nil {
		return fmt.Errorf("split partitions: %w", err)
	}
	if len(parts) == 0 || parts[0].Name != PartitionBefore {
		return fmt.Errorf("split partitions: event_chunks has no %s partition", PartitionBefore)
	}
	bound := parts[0].LessThan
	if from >= bound {
		return nil
	}
	if bound-from > MaxRestoredPartitions {
		from = bound - MaxRestoredPartitions
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ALTER TABLE %s REORGANIZE PARTITION %s INTO (PARTITION %s VALUES LESS THAN (%d)",
		chunksTable, PartitionBefore, PartitionBefore, from)
	for h := from; h < bound; h++ {
		fmt.Fprintf(&b, ", PARTITION %s VALUES LESS THAN (%d)", PartitionName(h), h+1)
	}
	b.WriteString(")")
	if err := execRetryingLockWait(ctx, conn, b.String()); err != nil {
		return fmt.Errorf("split partitions %s..%s off %s: %w", PartitionName(from), PartitionName(bound-1), PartitionBefore, err)
	}
	return nil
}

// execRetryingLockWait runs stmt on conn with lock_wait_timeout 2 s,
// retrying a lock wait timeout up to alterAttempts times: a statement
// waiting for a metadata lock makes every new insert wait behind it, so it
// must not wait long.
func execRetryingLockWait(ctx context.Context, conn *sql.Conn, stmt string) error {
	if _, err := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 2"); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), "SET SESSION lock_wait_timeout = DEFAULT")
	for attempt := 1; ; attempt++ {
		_, err := conn.ExecContext(ctx, stmt)
		var me *mysql.MySQLError
		if err == nil || !errors.As(err, &me) || me.Number != 1205 || attempt == alterAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
}
