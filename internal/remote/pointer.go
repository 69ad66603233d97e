package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// advanceRounds bounds the rounds of advance when other uploads keep moving
// the pointer.
const advanceRounds = 8

// advance moves the remote current pointer to snapshot id, at position pos,
// by compare-and-swap from the value it read, and returns the id the
// pointer names afterwards.
//
// The pointer only moves forward. When it already names a newer snapshot
// (one at a greater seq, or at the same seq with a greater id: the rule by
// which a local republish leaves current alone) it is left there and that
// is success, not an error: the older snapshot's upload is still complete
// and confirmed, it is just not current. That happens when uploads run out
// of order, e.g. an earlier snapshot that failed to upload is caught up
// after a newer one went up. A pointer naming a snapshot without a remote
// manifest is moved. A swap that loses a race reads the pointer again.
func (m *Mirror) advance(ctx context.Context, id string, pos binlogpos.Position) (string, error) {
	next := pointerValue(id)
	for round := 1; ; round++ {
		cur, err := m.readPointer(ctx, m.CurrentName())
		if err != nil {
			return "", err
		}
		if cur == next {
			return id, nil
		}
		if cur != "" {
			curID, err := parsePointer(cur)
			if err != nil {
				return "", err
			}
			newer, err := m.newer(ctx, curID, id, pos)
			if err != nil {
				return "", err
			}
			if newer {
				m.Log.Info("remote current names a newer snapshot; left there", "snapshot", id, "remote_current", curID)
				return curID, nil
			}
		}
		err = m.Store.SwapPointer(ctx, m.CurrentName(), cur, next)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, storage.ErrPointerMoved) || round == advanceRounds {
			return "", fmt.Errorf("move remote current to %s: %w", id, err)
		}
	}
}

// newer reports whether the remote snapshot other is newer than snapshot
// id at pos: a greater seq, or the same seq and a greater id. A snapshot
// without a remote manifest is not newer.
func (m *Mirror) newer(ctx context.Context, other, id string, pos binlogpos.Position) (bool, error) {
	man, _, err := m.ReadManifest(ctx, other)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	op := man.Position
	return op.Seq > pos.Seq || (op.Seq == pos.Seq && other > id), nil
}
