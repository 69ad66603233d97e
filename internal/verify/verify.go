// Package verify compares a live table with a snapshot of it (see
// docs/verify.md): a fingerprint per table, the per-row hash over the canonical
// values (snapshot.RowHash over rowimage.AppendSQLValue), rows combined by a
// wrapping 64-bit sum, plus a row count. The same function runs over the live
// table, inside a consistent-snapshot transaction (LiveFingerprint), and over
// the snapshot's table at the snapshot (SnapshotFingerprint for a table
// file).
//
// Verdicts:
//   - Match: the fingerprints are equal.
//   - Inconclusive: they differ, but the live server's binlog moved on since
//     the snapshot (its consistent snapshot's position is after the
//     snapshot's), so the table may simply have changed since: verify
//     compares with the snapshot as published and does not rebuild the
//     table at the live position (`dbtrail verify --at` compares with the
//     tables rebuilt at a moment instead). Also when a position is not
//     known (the server does not report it, the snapshot has none, or they
//     cannot be compared).
//   - Mismatch: they differ at the snapshot's own position (or before it), or
//     on a server that writes no binlog (a restore target, a scratch load),
//     where nothing can have moved on.
//
// Positions are compared as the same server's binlog coordinates (file
// sequence number, then offset): verifying another server that writes a
// binlog (a replica, a restore target with log_bin) gives verdicts that only
// mean something when its coordinates are the source's.
//
// The snapshot side is the table as it is at the snapshot (see
// docs/snapshot-format.md): for a table whose chain holds no changes
// (sqlexport.EmptyChain) its table file, whose rows must also give its
// footer's fingerprint; for any other the table file minus the rows its
// .posdel files name plus the newest version of every key in its .upserts
// files, read with internal/fold (DuckDB, spilling to a scratch folder under
// Options.TempDir).
package verify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Verdict is the outcome of verifying one table.
type Verdict string

const (
	Match        Verdict = "match"
	Mismatch     Verdict = "mismatch"
	Inconclusive Verdict = "inconclusive"
)

// DefaultMaxKeys bounds Result.Diff when Options.MaxKeys is zero.
const DefaultMaxKeys = 100

// Options tune Table. The zero value is the default.
type Options struct {
	// Explain lists the differing keys in Result.Diff when the fingerprints
	// differ. It keeps one map entry per live row (its key and hash) in
	// memory while the table is compared.
	Explain bool
	// MaxKeys bounds Result.Diff; 0 means DefaultMaxKeys. Result.DiffTotal
	// counts them all.
	MaxKeys int
	// TempDir is where Table makes (and afterwards removes) a scratch folder
	// for reading a table with a chain: DuckDB's spill files, which grow
	// with the chain, not with the table. Empty means os.TempDir().
	TempDir string
}

// Result is the verdict on one table.
type Result struct {
	Table   string  `json:"table"` // schema.table
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason"`
	// Live and Snap are the two fingerprints (Live is zero when the live
	// table's shape differs).
	Live snapshot.Fingerprint `json:"live"`
	Snap snapshot.Fingerprint `json:"snap"`
	// LivePos is the live consistent snapshot's binlog position, SnapPos the
	// snapshot's (its manifest's: a table file linked forward unchanged is
	// valid at the manifest's position, not only at its footer's).
	LivePos LivePosition       `json:"live_pos"`
	SnapPos binlogpos.Position `json:"snap_pos"`
	// Diff lists differing keys (with Options.Explain), sorted, at most
	// MaxKeys; DiffTotal counts all of them.
	Diff      []KeyDiff `json:"diff,omitempty"`
	DiffTotal int       `json:"diff_total,omitempty"`
}

// Table verifies schemaName.table of snap, as it is at the snapshot, against
// the live server db. It refuses (an error, no Result verdict) a table the
// snapshot does not hold, a table whose table file or any chain file has a
// digest that differs from the manifest (*snapshot.DigestError, checked
// before the live server is read), a table file whose rows do not give its
// footer's fingerprint (checked when its chain holds no changes), and any
// read error. db is as for LiveFingerprint.
func Table(ctx context.Context, db *sql.DB, snap *snapshot.Snapshot, schemaName, table string, opts Options) (Result, error) {
	res := Result{Table: schemaName + "." + table, SnapPos: snap.Manifest.Position}
	mt, ok := snap.Manifest.Table(schemaName, table)
	if !ok {
		return res, fmt.Errorf("snapshot %s has no table %s", snap.Manifest.SnapshotID, res.Table)
	}
	side, err := openSide(snap, mt, opts.TempDir)
	if err != nil {
		return res, fmt.Errorf("table %s: refused: %w", res.Table, err)
	}
	defer side.close()
	return compare(ctx, db, side, res, opts)
}

// Moment verifies the live table of db against t, a table rebuilt at a
// moment through the moment seam (moment.Rebuilder.Open), whose position
// is pos (the cut's). The verdicts are Table's, with pos in place of a
// snapshot's position: a server a .sql export of that moment was loaded
// into (no binlog) must match it.
func Moment(ctx context.Context, db *sql.DB, t *moment.Table, pos binlogpos.Position, opts Options) (Result, error) {
	res := Result{Table: t.Name(), SnapPos: pos}
	return compare(ctx, db, momentSide{t}, res, opts)
}

// compare fingerprints the live table and side and decides the verdict.
func compare(ctx context.Context, db *sql.DB, side side, res Result, opts Options) (Result, error) {
	t := side.table()
	var keys map[string]*tally
	if opts.Explain {
		keys = map[string]*tally{}
	}
	live := newHasher(t, keys, true)
	var err error
	res.LivePos, err = liveScan(ctx, db, t, live, Where{})
	var shape *ShapeError
	if errors.As(err, &shape) {
		if res.Snap, err = side.fingerprint(ctx); err != nil {
			return res, err
		}
		res.decide(shape.Error())
		return res, nil
	}
	if err != nil {
		return res, err
	}
	res.Live = live.fp
	if res.Snap, err = side.hash(ctx, newHasher(t, keys, false)); err != nil {
		return res, err
	}
	if res.Live == res.Snap {
		res.Verdict = Match
		res.Reason = fmt.Sprintf("%d rows, fingerprint %s", res.Live.Rows, res.Live)
		return res, nil
	}
	res.decide(fmt.Sprintf("fingerprints differ: live %s, snapshot %s", res.Live, res.Snap))
	if opts.Explain {
		maxKeys := opts.MaxKeys
		if maxKeys <= 0 {
			maxKeys = DefaultMaxKeys
		}
		res.Diff, res.DiffTotal = diffs(keys, maxKeys)
		floatCauses(t, keys, res.Diff)
	}
	return res, nil
}

// decide sets a verdict for a difference (what says what differs) from the
// two positions; see the package comment.
func (res *Result) decide(what string) {
	lp, sp := res.LivePos, res.SnapPos
	snapAt := fmt.Sprintf("%s:%d", sp.File, sp.Pos)
	res.Verdict = Inconclusive
	switch {
	case !lp.Reported:
		res.Reason = what + "; the server does not report the binlog position of its consistent snapshot (binlog_snapshot_file: MariaDB or Percona Server), so a change made since the snapshot cannot be told from a mismatch"
		return
	case lp.File == "":
		res.Verdict = Mismatch
		res.Reason = what + "; the server writes no binlog, so the difference is not a change made since the snapshot"
		return
	case sp.File == "":
		res.Reason = what + "; the snapshot records no binlog position to compare with"
		return
	}
	cmp, err := binlogpos.Compare(lp.Position, sp)
	switch {
	case err != nil:
		res.Reason = fmt.Sprintf("%s; the live position %s cannot be compared with the snapshot's %s: %v", what, lp, snapAt, err)
	case cmp > 0:
		res.Reason = fmt.Sprintf("%s; the live table moved on since the snapshot (live binlog position %s is after the snapshot's %s), and the index cannot bridge that window yet", what, lp, snapAt)
	case cmp == 0:
		res.Verdict = Mismatch
		res.Reason = fmt.Sprintf("%s at the snapshot's own binlog position %s", what, snapAt)
	default:
		res.Verdict = Mismatch
		res.Reason = fmt.Sprintf("%s; the live binlog position %s is before the snapshot's %s", what, lp, snapAt)
	}
}
