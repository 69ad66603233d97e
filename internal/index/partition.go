package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/change"
)

// The event_chunks table is partitioned by RANGE (hour_id), hour_id being the Unix
// hour of the commit time. Its partitions are, in order:
//
//	p_before                     everything older than the hour the table was created in
//	pYYYYMMDDHH ...              one per hour, VALUES LESS THAN (hour+1)
//	p_future                     VALUES LESS THAN MAXVALUE, so an insert never fails
//
// EnsurePartitions splits hourly partitions off p_future. DropPartition
// drops an hourly partition once its hour is safely archived (the archive
// workflow), SplitPartitions splits past hours off p_before (reindex);
// see partition_drop.go.

// Names of the two open-ended partitions.
const (
	PartitionBefore = "p_before"
	PartitionFuture = "p_future"
)

// DefaultAhead is how many hours past now Init makes sure have a partition.
const DefaultAhead = 6

// PartitionName returns the name of the hourly partition of hour h:
// pYYYYMMDDHH, UTC.
func PartitionName(hour uint32) string { return "p" + change.HourTime(hour).Format("2006010215") }

// Partition is one partition of the event_chunks table.
type Partition struct {
	Name string
	// Hour is the hour an hourly partition holds; 0 for p_before and p_future.
	Hour uint32
	// LessThan is the exclusive upper bound of hour_id; 0 for p_future
	// (MAXVALUE).
	LessThan uint32
	// Rows is InnoDB's estimate of the partition's rows, not an exact count.
	Rows int64
}

// Hourly reports whether p holds exactly one hour.
func (p Partition) Hourly() bool { return p.Name != PartitionBefore && p.Name != PartitionFuture }

// Partitions lists the event_chunks table's partitions in range order.
func (s *Store) Partitions(ctx context.Context) ([]Partition, error) {
	return listPartitions(ctx, s.db)
}

type queryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func listPartitions(ctx context.Context, q queryer) ([]Partition, error) {
	return tablePartitions(ctx, q, chunksTable)
}

// tablePartitions lists the RANGE (hour_id) partitions of one index table.
func tablePartitions(ctx context.Context, q queryer, table string) ([]Partition, error) {
	rows, err := q.QueryContext(ctx, `SELECT PARTITION_NAME, PARTITION_DESCRIPTION, TABLE_ROWS
		FROM information_schema.PARTITIONS
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
		ORDER BY PARTITION_ORDINAL_POSITION`, table)
	if err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	defer rows.Close()
	var parts []Partition
	for rows.Next() {
		var name, desc sql.NullString
		var n sql.NullInt64
		if err := rows.Scan(&name, &desc, &n); err != nil {
			return nil, fmt.Errorf("list partitions: %w", err)
		}
		if !name.Valid {
			return nil, fmt.Errorf("list partitions: %s is not partitioned", table)
		}
		p := Partition{Name: name.String, Rows: n.Int64}
		if desc.String != "MAXVALUE" {
			v, err := strconv.ParseUint(desc.String, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("list partitions: partition %s bound %q: %w", p.Name, desc.String, err)
			}
			p.LessThan = uint32(v)
			if p.Hourly() {
				p.Hour = p.LessThan - 1
			}
		}
		parts = append(parts, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	return parts, nil
}

// EnsurePartitions makes sure every hour from the last partitioned hour up to
// HourID(now)+ahead has its own partition, by splitting them off p_future
// (REORGANIZE PARTITION: instant while p_future is empty, and still correct,
// rows moved, when it is not). Existing partitions and their rows are never
// touched. Idempotent, and safe to run from several processes at once (they
// serialize on GET_LOCK('dbtrail.partitions')). Hours before the table's first
// hour stay in p_before. Something must call it at least hourly; an event past
// the last hourly partition is still stored, in p_future. The ALTER waits at
// most 2 s for its metadata lock per attempt (a pending ALTER blocks inserts),
// retrying up to 10 times before it gives up with the lock wait error.
func (s *Store) EnsurePartitions(ctx context.Context, now time.Time, ahead int) error {
	if ahead < 0 {
		return fmt.Errorf("ensure partitions: negative ahead %d", ahead)
	}
	target := change.HourID(now) + uint32(ahead)
	// Cheap check first: usually nothing is missing.
	parts, err := s.Partitions(ctx)
	if err != nil {
		return fmt.Errorf("ensure partitions: %w", err)
	}
	if len(parts) == 0 {
		return fmt.Errorf("ensure partitions: no event_chunks table (run Init)")
	}
	if lastBound(parts) > target {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("ensure partitions: %w", err)
	}
	defer conn.Close()
	unlock, err := namedLock(ctx, conn, "dbtrail.partitions")
	if err != nil {
		return fmt.Errorf("ensure partitions: %w", err)
	}
	defer unlock()
	// Re-read under the lock: another process may have done it.
	parts, err = listPartitions(ctx, conn)
	if err != nil {
		return fmt.Errorf("ensure partitions: %w", err)
	}
	if len(parts) == 0 || parts[len(parts)-1].Name != PartitionFuture {
		return fmt.Errorf("ensure partitions: event_chunks table has no %s partition", PartitionFuture)
	}
	from := lastBound(parts)
	if from > target {
		return nil
	}
	var b strings.Builder
	b.WriteString("ALTER TABLE " + chunksTable + " REORGANIZE PARTITION " + PartitionFuture + " INTO (")
	for h := from; h <= target; h++ {
		fmt.Fprintf(&b, "PARTITION %s VALUES LESS THAN (%d), ", PartitionName(h), h+1)
	}
	b.WriteString("PARTITION " + PartitionFuture + " VALUES LESS THAN MAXVALUE)")
	// While the ALTER waits for its metadata lock (behind a long read such as
	// TableChanges), every new insert waits behind it: wait briefly, and retry
	// rather than stall capture. The hours kept ahead leave room for that.
	if _, err := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 2"); err != nil {
		return fmt.Errorf("ensure partitions: %w", err)
	}
	defer conn.ExecContext(context.Background(), "SET SESSION lock_wait_timeout = DEFAULT")
	for attempt := 1; ; attempt++ {
		_, err := conn.ExecContext(ctx, b.String())
		if err == nil {
			return nil
		}
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1205 || attempt == alterAttempts {
			return fmt.Errorf("ensure partitions %s..%s: %w", PartitionName(from), PartitionName(target), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ensure partitions: %w", ctx.Err())
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
}

// alterAttempts bounds how often EnsurePartitions retries a lock wait timeout.
const alterAttempts = 10

// lastBound returns the exclusive upper bound of the last partition before
// p_future: the first hour that has no partition of its own.
func lastBound(parts []Partition) uint32 {
	var b uint32
	for _, p := range parts {
		if p.Name != PartitionFuture && p.LessThan > b {
			b = p.LessThan
		}
	}
	return b
}

// namedLock takes GET_LOCK(name) on conn, waiting until it is free or ctx is
// done, and returns the function that releases it.
func namedLock(ctx context.Context, conn *sql.Conn, name string) (func(), error) {
	for {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 5)", name).Scan(&got); err != nil {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if got.Valid && got.Int64 == 1 {
			return func() {
				// Closing the connection releases the lock too, should this fail.
				conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", name)
			}, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
	}
}
