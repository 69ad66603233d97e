package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
)

// The lookups below find a transaction by a key that grows with seq
// (binlog position, commit time, a GTID domain's sequence number) with a
// binary search over the chunks' first events: each probe reads the header
// of the chunk with the greatest first_seq at or before a seq (an index
// seek, no payload), which carries its first event's commit time, end
// position and GTID. Those first events are events of the stream in seq
// order, so the key grows along them too. A lookup costs a few dozen seeks
// whatever the size of the index, then unpacks the chunks overlapping the
// seqs between the last first event that matched and the next first event.

// chunkHeader is a stored chunk's seq range and its first event's keys.
type chunkHeader struct {
	first, last uint64
	commit      time.Time
	file        string
	endPos      uint64
	gtid        string
}

// headerAt returns the header of the chunk of source with the greatest
// first_seq <= seq; ok is false when there is none.
func (s *Store) headerAt(ctx context.Context, source string, seq uint64) (h chunkHeader, ok bool, err error) {
	var gtid sql.NullString
	err = s.db.QueryRowContext(ctx, `SELECT first_seq, last_seq, commit_ts, binlog_file, end_pos, gtid FROM event_chunks
		WHERE source = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1`, source, seq).
		Scan(&h.first, &h.last, &h.commit, &h.file, &h.endPos, &gtid)
	if errors.Is(err, sql.ErrNoRows) {
		return chunkHeader{}, false, nil
	}
	h.gtid = gtid.String
	return h, err == nil, err
}

// searchChunks returns the last chunk that may hold events in (floor, upto]
// whose header satisfies le, for an le that holds for a prefix of the
// chunks in seq order and fails for the rest; ok is false when le holds for
// none (then it holds for no event in (floor, upto] either).
func (s *Store) searchChunks(ctx context.Context, source string, floor, upto uint64, le func(chunkHeader) (bool, error)) (best chunkHeader, ok bool, err error) {
	lo, hi := spanFloor(floor+1), upto
	for lo <= hi {
		mid := lo + (hi-lo)/2
		h, found, err := s.headerAt(ctx, source, mid)
		if err != nil {
			return chunkHeader{}, false, err
		}
		if !found || h.first < lo {
			lo = mid + 1 // no chunk starts in [lo, mid]
			continue
		}
		yes, err := le(h)
		if err != nil {
			return chunkHeader{}, false, err
		}
		if yes {
			best, ok = h, true
			lo = mid + 1
		} else {
			if h.first == 0 {
				break
			}
			hi = h.first - 1
		}
	}
	return best, ok, nil
}

// lastAfterHeader returns the last event with floor < seq <= upto, at or
// after the first event of chunk h and before the next chunk's first event,
// for which keep holds (keep holds for a prefix of them).
func (s *Store) lastAfterHeader(ctx context.Context, source string, h chunkHeader, floor, upto uint64, keep func(*change.Event) (bool, error)) (change.Txn, bool, error) {
	var next sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MIN(first_seq) FROM event_chunks WHERE source = ? AND first_seq > ?`,
		source, h.first).Scan(&next); err != nil {
		return change.Txn{}, false, err
	}
	lo, hi := max(h.first, floor+1), upto
	if next.Valid && uint64(next.Int64) <= hi {
		hi = uint64(next.Int64) - 1
	}
	var out change.Txn
	found := false
	if lo > hi {
		return out, false, nil
	}
	err := s.scanSeqs(ctx, source, lo, hi, func(e *change.Event) error {
		yes, err := keep(e)
		if err != nil {
			return err
		}
		if yes {
			out, found = txnOf(e), true
		}
		return nil
	})
	return out, found, err
}

func txnOf(e *change.Event) change.Txn {
	return change.Txn{Position: e.Pos(), CommitTime: e.CommitTime}
}

// TxnAtPos returns the last captured transaction of source among the seqs
// (floor, upto] whose end position is at or before pos (a transaction is
// named by its last event). ok is false when there is none. Positions grow
// with seq, so the answer is exact.
func (s *Store) TxnAtPos(ctx context.Context, source string, pos binlogpos.Position, floor, upto uint64) (change.Txn, bool, error) {
	le := func(file string, end uint64) (bool, error) {
		c, err := binlogpos.Compare(binlogpos.Position{File: file, Pos: end}, pos)
		return c <= 0, err
	}
	h, ok, err := s.searchChunks(ctx, source, floor, upto, func(h chunkHeader) (bool, error) { return le(h.file, h.endPos) })
	if err != nil || !ok {
		return change.Txn{}, false, wrapLookup("position "+pos.String(), err)
	}
	t, ok, err := s.lastAfterHeader(ctx, source, h, floor, upto, func(e *change.Event) (bool, error) { return le(e.BinlogFile, e.EndPos) })
	return t, ok, wrapLookup("position "+pos.String(), err)
}

// TxnAtTime returns the last captured transaction of source among the seqs
// (floor, upto] whose commit time is at or before t. ok is false when there
// is none. Commit times are the source's clock: the search takes them as
// not decreasing in stream order, and where the source's clock went back
// it lands on the last transaction before the first one committed after t
// that the search meets.
func (s *Store) TxnAtTime(ctx context.Context, source string, t time.Time, floor, upto uint64) (change.Txn, bool, error) {
	h, ok, err := s.searchChunks(ctx, source, floor, upto, func(h chunkHeader) (bool, error) { return !h.commit.After(t), nil })
	if err != nil || !ok {
		return change.Txn{}, false, wrapLookup("time "+t.UTC().Format(time.RFC3339Nano), err)
	}
	txn, ok, err := s.lastAfterHeader(ctx, source, h, floor, upto, func(e *change.Event) (bool, error) { return !e.CommitTime.After(t), nil })
	return txn, ok, wrapLookup("time "+t.UTC().Format(time.RFC3339Nano), err)
}

// TxnOfSeq returns the transaction holding event seq of source (named by
// its last event), looked up among the seqs (floor, upto]. ok is false when
// no stored event has that seq.
func (s *Store) TxnOfSeq(ctx context.Context, source string, seq, floor, upto uint64) (change.Txn, bool, error) {
	if seq <= floor || seq > upto {
		return change.Txn{}, false, nil
	}
	e, ok, err := s.EventAt(ctx, source, seq)
	if err != nil || !ok {
		return change.Txn{}, false, wrapLookup(fmt.Sprintf("seq %d", seq), err)
	}
	return s.TxnAtPos(ctx, source, txnOf(&e).Position.Coords(), floor, upto)
}

// FirstSeqOf returns the seq of the first event of txn (a transaction named
// by its last event): the events before it with the same end position.
func (s *Store) FirstSeqOf(ctx context.Context, source string, txn change.Txn, floor uint64) (uint64, error) {
	return change.FirstSeqVia(ctx, s.TxnAtPos, source, txn, floor)
}

// gtidScanLimit bounds the chunk headers read while looking for one of a
// GTID's domain, and the events unpacked while looking for the GTID itself.
const gtidScanLimit = 1 << 20

// TxnOfGTID returns the transaction of source with GTID gtid (named by its
// last event) among the seqs (floor, upto]; ok is false when no captured
// event carries it (a transaction without row changes, such as DDL, has no
// events). It searches the chunks whose header GTID is of gtid's domain by
// its sequence number, then unpacks forward from the last one at or before
// it.
func (s *Store) TxnOfGTID(ctx context.Context, source, gtid string, floor, upto uint64) (change.Txn, bool, error) {
	dom, n, err := change.GTIDKey(gtid)
	if err != nil {
		return change.Txn{}, false, err
	}
	// Chunk headers of another domain say nothing: the probe moves to the
	// next header of the domain (reading headers only), or counts as "after"
	// when there is none before upto.
	var ofDomain func(h chunkHeader) (chunkHeader, bool, error)
	ofDomain = func(h chunkHeader) (chunkHeader, bool, error) {
		for read := 0; read < gtidScanLimit; {
			if d, _, err := change.GTIDKey(h.gtid); err == nil && d == dom {
				return h, true, nil
			}
			rows, err := s.db.QueryContext(ctx, `SELECT first_seq, last_seq, commit_ts, binlog_file, end_pos, gtid FROM event_chunks
				WHERE source = ? AND first_seq > ? AND first_seq <= ? ORDER BY first_seq LIMIT 500`, source, h.first, upto)
			if err != nil {
				return chunkHeader{}, false, err
			}
			var next []chunkHeader
			for rows.Next() {
				var c chunkHeader
				var g sql.NullString
				if err := rows.Scan(&c.first, &c.last, &c.commit, &c.file, &c.endPos, &g); err != nil {
					rows.Close()
					return chunkHeader{}, false, err
				}
				c.gtid = g.String
				next = append(next, c)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return chunkHeader{}, false, err
			}
			for _, c := range next {
				if d, _, err := change.GTIDKey(c.gtid); err == nil && d == dom {
					return c, true, nil
				}
			}
			if len(next) < 500 {
				return chunkHeader{}, false, nil
			}
			h = next[len(next)-1]
			read += len(next)
		}
		return chunkHeader{}, false, fmt.Errorf("no chunk of GTID domain %s among %d chunk headers", dom, gtidScanLimit)
	}
	start, ok, err := s.searchChunks(ctx, source, floor, upto, func(h chunkHeader) (bool, error) {
		d, found, err := ofDomain(h)
		if err != nil || !found {
			return false, err
		}
		_, m, _ := change.GTIDKey(d.gtid)
		return m <= n, nil
	})
	if err != nil {
		return change.Txn{}, false, wrapLookup("GTID "+gtid, err)
	}
	from := floor + 1
	if ok {
		if d, found, err := ofDomain(start); err != nil {
			return change.Txn{}, false, wrapLookup("GTID "+gtid, err)
		} else if found {
			from = max(from, d.first)
		}
	}
	// Unpack forward to the GTID, stopping at a later GTID of the domain.
	var hit *change.Event
	stop := errors.New("stop")
	seen := 0
	err = s.scanSeqs(ctx, source, from, upto, func(e *change.Event) error {
		seen++
		if e.GTID == gtid {
			c := *e
			hit = &c
			return stop
		}
		if d, m, err := change.GTIDKey(e.GTID); err == nil && d == dom && m > n {
			return stop
		}
		if seen > gtidScanLimit {
			return fmt.Errorf("GTID %s not found within %d events of the search's start", gtid, gtidScanLimit)
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return change.Txn{}, false, wrapLookup("GTID "+gtid, err)
	}
	if hit == nil {
		return change.Txn{}, false, nil
	}
	return s.TxnAtPos(ctx, source, hit.Pos().Coords(), floor, upto)
}

func wrapLookup(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("find the transaction at %s: %w", what, err)
}
