package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
)

// FinishReindex ends a restore. It finds what the index now holds (the
// runs of seqs restored) and writes, in one index transaction
// (index.Store.FinishReindex): the schema history, gaps and starts of the
// history file that apply up to the last restored transaction, the
// checkpoint at that transaction's end, and a capture gap for every stretch
// it cannot vouch for. It invents no continuity: when the source no longer
// has the binlog file of that checkpoint, a gap from it to the source's
// oldest binlog is recorded (capture then stops there, as after any gap);
// seqs missing between restored ones (an archive that could not be read)
// are a gap between the transactions around them. It holds the source's
// capture lease while it works; the restore is marked finished in the
// transaction that writes the checkpoint, and capture may start from then
// on. A finished restore is reported again, not redone.
func (a *Activities) FinishReindex(ctx context.Context, in calls.FinishReindexInput) (calls.FinishReindexResult, error) {
	var res calls.FinishReindexResult
	if rs, found, err := a.Index.ReindexStatus(ctx, in.Source); err != nil || (found && !rs.FinishedAt.IsZero()) {
		if err != nil {
			return res, err
		}
		return a.finishedReport(ctx, rs)
	}
	_, stop := keepAlive(ctx)
	defer stop()
	lease, err := a.restoreLease(ctx, in.Source, restoreLeaseWait)
	if err != nil {
		return res, err
	}
	defer lease.Release()
	st, err := a.restoreStore(ctx, in.ArchiveURL)
	if err != nil {
		return res, err
	}
	hist, err := readHistory(ctx, st, in.Source)
	if err != nil {
		return res, err
	}
	runs, err := a.Index.SeqRuns(ctx, in.Source)
	if err != nil {
		return res, err
	}
	if len(runs) == 0 {
		return res, nonRetryable(payload.ErrBrokenArchive, fmt.Errorf("no archive of source %s could be restored (%s); the restore stays unfinished",
			in.Source, strings.Join(in.Failed, "; ")))
	}
	last, err := a.eventAt(ctx, in.Source, runs[len(runs)-1].Last)
	if err != nil {
		return res, err
	}
	cp := change.Checkpoint{Source: in.Source, BinlogFile: last.BinlogFile, BinlogPos: last.EndPos, GTID: last.GTID,
		LastSeq: last.Seq, LastCommit: last.CommitTime}
	kept, err := restoredHistory(hist, cp)
	if err != nil {
		return res, nonRetryable(payload.ErrBrokenArchive, err)
	}
	gaps, err := a.holeGaps(ctx, in.Source, runs, kept.Starts)
	if err != nil {
		return res, err
	}
	purged, err := a.binlogGap(ctx, in.Source, cp)
	if err != nil {
		return res, err
	}
	if purged != nil {
		gaps = append(gaps, *purged)
	}
	res = a.restoreReport(in, runs, cp, gaps, purged)
	if err := a.fillCounts(ctx, in.Source, &res); err != nil {
		return res, err
	}
	_, err = a.Index.FinishReindex(ctx, in.Source, lease, index.ReindexFinish{Checkpoint: cp, Schemas: kept.Schemas,
		Gaps: append(kept.Gaps, gaps...), Starts: kept.Starts, Hours: res.Hours, Events: res.Events,
		FirstSeq: res.FirstSeq, LastSeq: res.LastSeq, Failed: in.Failed, Outcome: res.Outcome})
	return res, err
}

// eventAt returns a restored event the index must hold.
func (a *Activities) eventAt(ctx context.Context, source string, seq uint64) (change.Event, error) {
	e, ok, err := a.Index.EventAt(ctx, source, seq)
	if err == nil && !ok {
		err = fmt.Errorf("restored event %d of %s not found", seq, source)
	}
	return e, err
}

// holeGaps returns a capture gap for each stretch of seqs the restore
// lacks: before the first restored seq (after the first capture start)
// and between runs. A gap runs from the end of the transaction before the
// missing events to the end of the first one after them.
func (a *Activities) holeGaps(ctx context.Context, source string, runs []index.SeqRun, starts []change.Start) ([]change.Gap, error) {
	var out []change.Gap
	if len(starts) > 0 && runs[0].First > starts[0].Seq+1 {
		after, err := a.eventAt(ctx, source, runs[0].First)
		if err != nil {
			return nil, err
		}
		out = append(out, holeGap(source, starts[0].Position, after, starts[0].Seq+1))
	}
	for i := 1; i < len(runs); i++ {
		before, err := a.eventAt(ctx, source, runs[i-1].Last)
		if err != nil {
			return nil, err
		}
		after, err := a.eventAt(ctx, source, runs[i].First)
		if err != nil {
			return nil, err
		}
		out = append(out, holeGap(source, before.Pos().Coords(), after, before.Seq+1))
	}
	return out, nil
}

// holeGap is the gap of the missing seqs from..after.Seq-1.
func holeGap(source string, from binlogpos.Position, after change.Event, first uint64) change.Gap {
	return change.Gap{Source: source, FromFile: from.File, FromPos: from.Pos, ToFile: after.BinlogFile, ToPos: after.EndPos,
		DetectedAt: time.Now().UTC(),
		Reason:     fmt.Sprintf("reindex: events seq %d..%d are in no archive file that could be read", first, after.Seq-1)}
}

// binlogGap returns the gap to record when the source no longer has the
// binlog file of cp, nil when it has.
func (a *Activities) binlogGap(ctx context.Context, source string, cp change.Checkpoint) (*change.Gap, error) {
	db, err := a.openSource(source)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	files, err := binlogpos.Files(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("list the binlogs of source %s: %w", source, err)
	}
	if slices.Contains(files, cp.BinlogFile) {
		return nil, nil
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("source %s lists no binary logs", source)
	}
	return &change.Gap{Source: source, FromFile: cp.BinlogFile, FromPos: cp.BinlogPos, ToFile: files[0], ToPos: 4,
		DetectedAt: time.Now().UTC(),
		Reason: fmt.Sprintf("binlog %s is no longer on the source (oldest is %s): the changes after the last archived transaction (seq %d) are lost to the index",
			cp.BinlogFile, files[0], cp.LastSeq)}, nil
}

// restoreReport is the result of a restore: the checkpoint, the gaps and
// the outcome in words.
func (a *Activities) restoreReport(in calls.FinishReindexInput, runs []index.SeqRun, cp change.Checkpoint, gaps []change.Gap, purged *change.Gap) calls.FinishReindexResult {
	res := calls.FinishReindexResult{FirstSeq: runs[0].First, LastSeq: runs[len(runs)-1].Last,
		Resume: cp.Pos()}
	for _, g := range gaps {
		res.Gaps = append(res.Gaps, fmt.Sprintf("%s:%d → %s:%d: %s", g.FromFile, g.FromPos, g.ToFile, g.ToPos, g.Reason))
	}
	if purged != nil {
		res.Outcome = fmt.Sprintf("capture gap recorded at %s:%d (seq %d): %s; capture stops there until restarted with --continue-past-gap",
			cp.BinlogFile, cp.BinlogPos, cp.LastSeq, purged.Reason)
	} else if len(gaps) > 0 {
		res.Outcome = fmt.Sprintf("capture resumes at %s:%d after seq %d (the source still has that binlog); %d capture gap(s) recorded where restored seqs are missing",
			cp.BinlogFile, cp.BinlogPos, cp.LastSeq, len(gaps))
	} else {
		res.Outcome = fmt.Sprintf("capture resumes at %s:%d after seq %d with no gap: the source still has that binlog",
			cp.BinlogFile, cp.BinlogPos, cp.LastSeq)
	}
	return res
}

// fillCounts sets the hours and events the index holds from the restore's
// archive records.
func (a *Activities) fillCounts(ctx context.Context, source string, res *calls.FinishReindexResult) error {
	recs, err := a.Index.Archives(ctx, source)
	if err != nil {
		return err
	}
	res.Hours = len(recs)
	for _, r := range recs {
		res.Events += r.Events
	}
	if res.Hours == 0 {
		return errors.New("restored events without archive records")
	}
	return nil
}

// finishedReport reports a restore that a former attempt finished.
func (a *Activities) finishedReport(ctx context.Context, rs index.ReindexState) (calls.FinishReindexResult, error) {
	res := calls.FinishReindexResult{Hours: rs.Hours, Events: rs.Events, FirstSeq: rs.FirstSeq, LastSeq: rs.LastSeq, Outcome: rs.Outcome}
	cp, _, err := a.Index.LoadCheckpoint(ctx, rs.Source)
	res.Resume = cp.Pos()
	return res, err
}
