// Package change holds the shared types of captured row changes: an
// Event (one row change with its before and after image), the
// transaction a cut lands on (Txn), where capture stands (Checkpoint),
// a table's schema versions, capture starts and gaps, and the hour
// arithmetic of the hourly partitions and archives. It imports no
// database: the index store (internal/index), the archive, the fold and
// the moment planner all speak these types.
package change

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Op is the kind of a row change.
type Op byte

// The three kinds of row change.
const (
	OpInsert Op = 'i'
	OpUpdate Op = 'u'
	OpDelete Op = 'd'
)

// Valid reports whether o is one of OpInsert, OpUpdate, OpDelete.
func (o Op) Valid() bool { return o == OpInsert || o == OpUpdate || o == OpDelete }

// String returns the one-letter form stored in the index.
func (o Op) String() string { return string(rune(o)) }

// Event is one row change as stored in the index.
type Event struct {
	// Seq is the per-source sequence number: unique, and growing in stream order.
	Seq uint64
	// CommitTime is the commit time of the event's transaction, UTC, kept to the
	// microsecond. Its hour decides the partition the event lives in.
	CommitTime time.Time
	BinlogFile string
	// EndPos is the end position of the event's transaction; 0 until known
	// (see Tx.SetEndPos).
	EndPos uint64
	// GTID of the transaction, "" when the source has none (stored as NULL).
	GTID          string
	Schema, Table string
	Op            Op
	// PK is the canonical text of the row's key: the after image's, or for a
	// delete the before image's.
	PK string
	// PKBefore is the before image's key of an update that changed the key
	// ("" otherwise): such an update deletes the row PKBefore names.
	PKBefore      string
	SchemaVersion uint32
	// Before and After are the JSON images; nil means none (SQL NULL). An insert
	// has no Before, a delete no After, an update both.
	Before, After []byte
	// Columns, when not nil, says Before and After are given in their stored
	// form: JSON arrays of the values in the order of the column names
	// Columns lists (a JSON array of strings), an update's After with
	// rowimage.Unchanged for values equal to Before's, as capture encodes them.
	// Otherwise they are JSON objects {"col":value,...}. Readers always
	// return objects, and nil Columns.
	Columns []byte
}

// Checkpoint is where capture of one source stands: the position after the last
// transaction whose events are in the index.
type Checkpoint struct {
	Source     string
	BinlogFile string
	BinlogPos  uint64
	// GTID is the last transaction's GTID; GTIDSet the executed set after it.
	GTID       string
	GTIDSet    string
	LastSeq    uint64
	LastCommit time.Time
	UpdatedAt  time.Time
}

// SchemaVersion is one version of one source table's definition in stream
// order.
type SchemaVersion struct {
	Source, Schema, Table string
	// Version counts 1, 2, ... per table.
	Version uint32
	// Seq is the last event seq before this version applies: events with a
	// greater seq use this version (until the next one).
	Seq        uint64
	BinlogFile string
	BinlogPos  uint64
	DDL        string
	// Definition is the table from this version on; nil means the table was
	// dropped.
	Definition *schema.Table
	CreatedAt  time.Time
}

// Gap is a stretch of the source's binlog that capture could not read.
type Gap struct {
	ID         int64
	Source     string
	FromFile   string
	FromPos    uint64
	FromGTID   string
	ToFile     string
	ToPos      uint64
	Reason     string
	DetectedAt time.Time
}

// Start is a point where capture of a source began with no history before
// it: the first start, or a restart past a capture gap.
type Start struct {
	Source    string
	Seq       uint64 // last seq before the start (events after it have larger seqs)
	Position  binlogpos.Position
	Reason    string
	StartedAt time.Time
}

// Txn is one captured transaction, named by its last event: the point a
// cut lands on. All events of a transaction share its commit time, binlog
// file, end position and GTID, and have consecutive seqs.
type Txn struct {
	// Position is the transaction's binlog file and end position, its GTID
	// ("" when the source has none) and the seq of its last event.
	Position   binlogpos.Position
	CommitTime time.Time
}

// HourID returns the partition key of commit time t: whole hours since the Unix
// epoch, UTC.
func HourID(t time.Time) uint32 { return uint32(t.Unix() / 3600) }

// HourTime returns the start of hour h, UTC.
func HourTime(h uint32) time.Time { return time.Unix(int64(h)*3600, 0).UTC() }

// GTIDKey splits a GTID into its domain and its sequence number: MariaDB's
// domain-server-seq gives the domain ("0") and seq; MySQL's uuid:n (or
// uuid:tag:n) gives everything before the last colon and n. Within one
// domain, sequence numbers grow in stream order.
func GTIDKey(gtid string) (domain string, n uint64, err error) {
	if i := strings.LastIndexByte(gtid, ':'); i >= 0 {
		n, err = strconv.ParseUint(gtid[i+1:], 10, 64)
		if err != nil || i == 0 {
			return "", 0, fmt.Errorf("GTID %q: want uuid:n", gtid)
		}
		return strings.ToLower(gtid[:i]), n, nil
	}
	parts := strings.Split(gtid, "-")
	if len(parts) != 3 {
		return "", 0, fmt.Errorf("GTID %q: want domain-server-seq (MariaDB) or uuid:n (MySQL)", gtid)
	}
	for _, p := range parts[:2] {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return "", 0, fmt.Errorf("GTID %q: want domain-server-seq of numbers", gtid)
		}
	}
	if n, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
		return "", 0, fmt.Errorf("GTID %q: want domain-server-seq of numbers", gtid)
	}
	return parts[0], n, nil
}

// Pos is the event's transaction's position: binlog file, end position,
// GTID and the event's seq.
func (e *Event) Pos() binlogpos.Position {
	return binlogpos.Position{File: e.BinlogFile, Pos: e.EndPos, GTID: e.GTID, Seq: e.Seq}
}

// Pos is where capture stands: the binlog file and position after the
// last captured transaction, its GTID and the last seq.
func (c Checkpoint) Pos() binlogpos.Position {
	return binlogpos.Position{File: c.BinlogFile, Pos: c.BinlogPos, GTID: c.GTID, Seq: c.LastSeq}
}

// Pos is the binlog position of the version's DDL and the last seq
// before it.
func (v SchemaVersion) Pos() binlogpos.Position {
	return binlogpos.Position{File: v.BinlogFile, Pos: v.BinlogPos, Seq: v.Seq}
}

// From is where the gap begins (the last position capture read before
// it, with its GTID).
func (g Gap) From() binlogpos.Position {
	return binlogpos.Position{File: g.FromFile, Pos: g.FromPos, GTID: g.FromGTID}
}

// To is where capture went on after the gap.
func (g Gap) To() binlogpos.Position { return binlogpos.Position{File: g.ToFile, Pos: g.ToPos} }

// Archive is the record (kept in the index) of one hour of a source's events written
// to object storage as an archive file (docs/archive.md).
type Archive struct {
	Source string
	// Hour is the archived hour (an HourID).
	Hour uint32
	// Object is the file's name in the store; Location describes the store
	// (storage.Store.Location), for people.
	Object, Location string
	Size             int64
	SHA256           string
	// Events is how many events the file holds; FirstSeq and LastSeq the
	// smallest and greatest of their seqs.
	Events            int64
	FirstSeq, LastSeq uint64
	// ConfirmedAt is when the stored object was read back and found to be
	// this file (size, sha256, footer count); zero while it is not.
	ConfirmedAt time.Time
	// DroppedAt is when the hour's events last left the index; zero while
	// they have not.
	DroppedAt time.Time
}

// Confirmed reports whether the stored object was checked to be the file.
func (a Archive) Confirmed() bool { return !a.ConfirmedAt.IsZero() }

// TxnAtPosFunc is a lookup of the last transaction ending at or before a
// position among the seqs (floor, upto] (Store.TxnAtPos, or one that also
// reads archived hours).
type TxnAtPosFunc func(ctx context.Context, source string, pos binlogpos.Position, floor, upto uint64) (Txn, bool, error)

// FirstSeqVia returns the seq of the first event of txn as FirstSeqOf
// does, looking the transaction before it up with txnAtPos.
func FirstSeqVia(ctx context.Context, txnAtPos TxnAtPosFunc, source string, txn Txn, floor uint64) (uint64, error) {
	before := txn.Position.Coords()
	if before.Pos == 0 {
		return txn.Position.Seq, nil
	}
	before.Pos--
	prev, ok, err := txnAtPos(ctx, source, before, floor, txn.Position.Seq)
	if err != nil {
		return 0, err
	}
	if !ok {
		return floor + 1, nil
	}
	return prev.Position.Seq + 1, nil
}
