package capture

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// GapError says the binlog the checkpoint points into is gone from the
// source: the changes between From and To can never be captured.
type GapError struct {
	Gap change.Gap
}

func (e *GapError) Error() string {
	g := e.Gap
	return fmt.Sprintf("capture gap for source %s: %s; changes from %s:%d to %s:%d are lost to the index. "+
		"Restart capture with --continue-past-gap to go on from %s:%d; the next refresh across the gap then takes a full backup in its place "+
		"(a full backup needs capture past its dump position: started before, it waits for capture)",
		g.Source, g.Reason, g.FromFile, g.FromPos, g.ToFile, g.ToPos, g.ToFile, g.ToPos)
}

// prepare finds where to stream from: the checkpoint, or for a new source
// the configured start, with the schema history that holds there.
func prepare(ctx context.Context, cfg *Config, store *index.Store, src *sourceConn, lease *index.Lease, log *slog.Logger) (*startState, error) {
	tables := newTableTracker(cfg.Source, log)
	cp, ok, err := store.LoadCheckpoint(ctx, cfg.Source)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	if ok {
		vers, err := store.LatestSchemas(ctx, cfg.Source)
		if err != nil {
			return nil, fmt.Errorf("load schema history: %w", err)
		}
		tables.load(vers)
		return resumeOrGap(ctx, cfg, store, src, lease, cp, tables, log)
	}
	return firstStart(ctx, cfg, store, src, lease, tables, log)
}

// resumeOrGap resumes at the checkpoint when the source still has its
// binlog; otherwise it records the gap and stops, unless told to go on.
func resumeOrGap(ctx context.Context, cfg *Config, store *index.Store, src *sourceConn, lease *index.Lease,
	cp change.Checkpoint, tables *tableTracker, log *slog.Logger) (*startState, error) {
	files, err := src.binaryLogs(ctx)
	if err != nil {
		return nil, err
	}
	if slices.Contains(files, cp.BinlogFile) {
		return &startState{checkpoint: cp, tables: tables}, nil
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("source lists no binary logs")
	}
	gap := change.Gap{Source: cfg.Source, FromFile: cp.BinlogFile, FromPos: cp.BinlogPos, FromGTID: cp.GTIDSet,
		ToFile: files[0], ToPos: 4, DetectedAt: time.Now().UTC(),
		Reason: fmt.Sprintf("binlog %s is no longer on the source (oldest is %s)", cp.BinlogFile, files[0])}
	if err := recordGapOnce(ctx, store, gap); err != nil {
		return nil, err
	}
	cfg.Metrics.Errors.WithLabelValues(cfg.Source, "gap").Inc()
	if !cfg.ContinuePastGap {
		return nil, &GapError{Gap: gap}
	}
	log.Warn("continuing past a capture gap", slog.String("from", fmt.Sprintf("%s:%d", gap.FromFile, gap.FromPos)),
		slog.String("to", fmt.Sprintf("%s:%d", gap.ToFile, gap.ToPos)))
	// DDL inside the gap is lost too: the schema is read from the source again,
	// and table maps define any table until the stream reaches the present.
	start := gap.To()
	cp.BinlogFile, cp.BinlogPos, cp.GTID = start.File, start.Pos, ""
	return bootstrap(ctx, cfg, store, src, lease, tables, cp, start, log)
}

func recordGapOnce(ctx context.Context, store *index.Store, gap change.Gap) error {
	gaps, err := store.Gaps(ctx, gap.Source)
	if err != nil {
		return fmt.Errorf("list capture gaps: %w", err)
	}
	for _, g := range gaps {
		if g.FromFile == gap.FromFile && g.FromPos == gap.FromPos {
			return nil
		}
	}
	if _, err := store.RecordGap(ctx, gap); err != nil {
		return fmt.Errorf("record capture gap: %w", err)
	}
	return nil
}

// firstStart picks the start position of a source seen for the first time.
func firstStart(ctx context.Context, cfg *Config, store *index.Store, src *sourceConn, lease *index.Lease,
	tables *tableTracker, log *slog.Logger) (*startState, error) {
	cp := change.Checkpoint{Source: cfg.Source}
	switch cfg.Start {
	case "current":
		return bootstrap(ctx, cfg, store, src, lease, tables, cp, binlogpos.Position{}, log)
	case "earliest":
		files, err := src.binaryLogs(ctx)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("source lists no binary logs")
		}
		return bootstrap(ctx, cfg, store, src, lease, tables, cp, binlogpos.Position{File: files[0], Pos: 4}, log)
	default:
		start, err := binlogpos.Parse(cfg.Start)
		if err != nil {
			return nil, fmt.Errorf("capture start: want current, earliest or file:pos: %w", err)
		}
		return bootstrap(ctx, cfg, store, src, lease, tables, cp, start, log)
	}
}

// bootstrap reads the source's schema and writes it as the history's first
// versions with the start checkpoint, in one index transaction. With a zero
// start it starts at the source's current position: the position is read
// before and after the schema, and while they differ the schema may be ahead
// of the stream, so table maps up to the later position define tables that
// disagree. A start in the past is lenient up to the present for the same
// reason.
func bootstrap(ctx context.Context, cfg *Config, store *index.Store, src *sourceConn, lease *index.Lease,
	tables *tableTracker, cp change.Checkpoint, start binlogpos.Position, log *slog.Logger) (*startState, error) {
	var cat *schema.Catalog
	var until binlogpos.Position
	for attempt := 0; ; attempt++ {
		before, err := src.currentPosition(ctx)
		if err != nil {
			return nil, err
		}
		if cat, err = schema.LoadFromServer(ctx, src.db, nil); err != nil {
			return nil, fmt.Errorf("read schema of source: %w", err)
		}
		after, err := src.currentPosition(ctx)
		if err != nil {
			return nil, err
		}
		if start.IsZero() {
			if before == after || attempt == 20 {
				start, until = before, after
				if before == after {
					until = binlogpos.Position{}
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		until = after
		break
	}
	tables.lenientUntil = until
	cp.BinlogFile, cp.BinlogPos = start.File, start.Pos
	tx, err := store.Begin(ctx, cfg.Source, lease)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	note := fmt.Sprintf("-- read from the source's information_schema when capture started at %s", start)
	for _, t := range cat.Tables() {
		if schema.IsSystemSchema(t.Schema) {
			continue
		}
		v := tables.record(t.Schema, t.Name, t, note, start, cp.LastSeq)
		if err := tx.PutSchemaVersion(ctx, v); err != nil {
			return nil, fmt.Errorf("write schema history of %s: %w", t.QualifiedName(), err)
		}
	}
	reason := "first start"
	if cp.LastSeq > 0 {
		reason = "restart past a capture gap"
	}
	if err := tx.RecordStart(ctx, change.Start{Seq: cp.LastSeq, Position: start, Reason: reason, StartedAt: time.Now()}); err != nil {
		return nil, err
	}
	cp.UpdatedAt = time.Now().UTC()
	if err := tx.SaveCheckpoint(ctx, cp); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit start checkpoint: %w", err)
	}
	log.Info("capture starts", slog.String("at", start.String()), slog.Int("tables", len(cat.Tables())))
	return &startState{checkpoint: cp, tables: tables}, nil
}
