package api

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/mydumper"
	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
)

// BackupRequest is POST /v1/backups: a full backup (FullBackup); with
// Tables ("schema.table") a partial full backup of those tables only.
type BackupRequest struct {
	Source   string   `json:"source"`
	Label    string   `json:"label"`
	Parallel int      `json:"parallel"`
	Tables   []string `json:"tables"`
}

// RefreshRequest is POST /v1/refreshes: a refresh (Refresh), with the
// worker's refresh settings unless TableDeltas says otherwise. A refresh
// of the source that runs is followed: the answer is that job, Followed,
// with who started it. New queues one more after it. It carries no
// retention policy (a keep_snapshots field is refused as unknown): the
// refresh's prune keeps what the worker's policy says.
type RefreshRequest struct {
	Source       string `json:"source"`
	Label        string `json:"label"`
	TableDeltas  *bool  `json:"table_deltas"`
	NoFullBackup bool   `json:"no_full_backup"`
	New          bool   `json:"new"`
}

// FollowedRefresh is the answer to a refresh asked for with New while one
// runs: the running job, followed, and the ID the queued one starts under
// once it ends.
type FollowedRefresh struct {
	jobs.Job
	Queued string `json:"queued"`
}

// queuer is the part of *jobs.Service that starts a job after another.
type queuer interface {
	After(ctx context.Context, after jobs.Job, req jobs.Request) (jobs.Job, error)
}

// ExportRequest is POST /v1/exports (Export): format sql or parquet at a
// moment At, or changes over [From, Until), into Out, a name inside the
// server's export folder.
type ExportRequest struct {
	Source            string   `json:"source"`
	Label             string   `json:"label"`
	Format            string   `json:"format"`
	At                string   `json:"at"`
	From              string   `json:"from"`
	Until             string   `json:"until"`
	Schemas           []string `json:"schemas"`
	Tables            []string `json:"tables"`
	Out               string   `json:"out"`
	MaxStatementBytes int      `json:"max_statement_bytes"`
	Parallel          int      `json:"parallel"`
}

// VerifyRequest is POST /v1/verifies (Verify): fingerprints of a
// snapshot's tables against the live source.
type VerifyRequest struct {
	Source   string   `json:"source"`
	Label    string   `json:"label"`
	Snapshot string   `json:"snapshot"`
	Tables   []string `json:"tables"`
}

// RestoreRequest is POST /v1/restores: a restore (the Restore workflow)
// of the tables at moment At into Target, a restore target the workers'
// operator configured, named (never a DSN, a file or a query: those are
// the target's configuration on the workers). Restores into one target
// and schema run one at a time.
type RestoreRequest struct {
	Source  string   `json:"source"`
	Label   string   `json:"label"`
	Target  string   `json:"target"`
	At      string   `json:"at"`
	Schemas []string `json:"schemas"`
	Tables  []string `json:"tables"`
	// IntoSchema is the schema restored into ({schema}: the source
	// table's); Replace swaps a verified twin in (where the target allows).
	IntoSchema string `json:"into_schema"`
	Replace    bool   `json:"replace"`
	NoBinlog   bool   `json:"no_binlog"`
	Parallel   int    `json:"parallel"`
	// The load's limits (0: each one's default).
	ChunkTimeMS      int `json:"chunk_time_ms"`
	MaxLagMS         int `json:"max_lag_ms"`
	MaxLoad          int `json:"max_load"`
	MaxRowsPerSecond int `json:"max_rows_per_second"`
}

// common checks the source and label every start carries; an empty source
// is the configured one.
func (s *server) common(source, label *string) error {
	if *source == "" {
		*source = s.cfg.Source
	}
	if err := jobs.CheckName("source", *source); err != nil {
		return badField("source", err)
	}
	if *label != "" {
		if err := jobs.CheckName("label", *label); err != nil {
			return badField("label", err)
		}
	}
	return nil
}

// start starts req and answers 202 with the job.
func (s *server) start(w http.ResponseWriter, r *http.Request, req jobs.Request) error {
	j, err := s.cfg.Jobs.Start(r.Context(), req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	writeJSON(w, http.StatusAccepted, j)
	return nil
}

func (s *server) startBackup(w http.ResponseWriter, r *http.Request, body any) error {
	b := body.(*BackupRequest)
	if err := s.common(&b.Source, &b.Label); err != nil {
		return err
	}
	if b.Parallel < 0 || b.Parallel > 64 {
		return badFieldf("parallel", "parallel %d: want 0 (default) to 64", b.Parallel)
	}
	if len(b.Tables) > 0 {
		if _, err := mydumper.ParseTables(b.Tables); err != nil {
			return badFieldf("tables", "%v", err)
		}
	}
	return s.start(w, r, jobs.Request{Kind: jobs.Backup, Source: b.Source, Label: b.Label,
		Input: payload.FullBackupInput{Source: b.Source, Parallel: b.Parallel, Tables: b.Tables}})
}

func (s *server) startRefresh(w http.ResponseWriter, r *http.Request, body any) error {
	b := body.(*RefreshRequest)
	if err := s.common(&b.Source, &b.Label); err != nil {
		return err
	}
	in := s.cfg.Refresh(b.Source)
	in.Source = b.Source
	if b.TableDeltas != nil {
		in.TableDeltas = *b.TableDeltas
	}
	in.NoFullBackup = in.NoFullBackup || b.NoFullBackup
	req := jobs.Request{Kind: jobs.Refresh, Source: b.Source, Label: b.Label, Input: in, Follow: true}
	q, canQueue := s.cfg.Jobs.(queuer)
	if b.New && !canQueue {
		return badFieldf("new", "this server cannot queue a refresh")
	}
	if b.New && req.Label == "" {
		// Named now: the answer says under which ID the queued one starts.
		req.Label = jobs.DefaultLabel(jobs.Refresh, time.Now())
	}
	j, err := s.cfg.Jobs.Start(r.Context(), req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	if !j.Followed || !b.New {
		writeJSON(w, http.StatusAccepted, j)
		return nil
	}
	// The queued start waits in this server for the followed job to end:
	// a server stopped before then does not start it.
	go func(ctx context.Context) {
		if next, err := q.After(ctx, j, req); err != nil {
			s.log.Warn("queued refresh not started", slog.String("after", j.ID), slog.String("error", err.Error()))
		} else {
			s.log.Info("queued refresh started", slog.String("after", j.ID), slog.String("job", next.ID))
		}
	}(context.WithoutCancel(r.Context()))
	writeJSON(w, http.StatusAccepted, FollowedRefresh{Job: j, Queued: jobs.ID(req.Source, req.Label)})
	return nil
}

func (s *server) startExport(w http.ResponseWriter, r *http.Request, body any) error {
	b := body.(*ExportRequest)
	if err := s.common(&b.Source, &b.Label); err != nil {
		return err
	}
	spec, err := s.exportSpec(b)
	if err != nil {
		return err
	}
	return s.start(w, r, jobs.Request{Kind: jobs.Export, Source: b.Source, Label: b.Label,
		Input: payload.ExportInput{ExportSpec: spec, Parallel: b.Parallel}})
}

// exportSpec checks an export request and returns its spec, Out inside
// the export folder.
func (s *server) exportSpec(b *ExportRequest) (payload.ExportSpec, error) {
	if s.cfg.ExportDir == "" {
		return payload.ExportSpec{}, &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured,
			Message: "exports are off: the server has no export folder (--export-dir)"}
	}
	spec := payload.ExportSpec{Source: b.Source, Format: b.Format, Schemas: b.Schemas, Tables: b.Tables,
		MaxStatementBytes: b.MaxStatementBytes}
	switch b.Format {
	case payload.ExportSQL, payload.ExportParquet:
		if b.From != "" || b.Until != "" {
			return spec, badFieldf("from", "a %s export is of one moment: give at, not from and until", b.Format)
		}
		if err := checkMoment("at", b.At); err != nil {
			return spec, err
		}
		spec.At = b.At
	case payload.ExportChanges:
		if b.At != "" {
			return spec, badFieldf("at", "a changes export is of a range: give from and until, not at")
		}
		for _, m := range []struct{ name, v string }{{"from", b.From}, {"until", b.Until}} {
			if err := checkMoment(m.name, m.v); err != nil {
				return spec, err
			}
		}
		spec.From, spec.Until = b.From, b.Until
	default:
		return spec, badFieldf("format", "format %q: want sql, parquet or changes", b.Format)
	}
	if b.Format != payload.ExportSQL && b.MaxStatementBytes != 0 {
		return spec, badFieldf("max_statement_bytes", "max_statement_bytes is for sql exports")
	}
	if b.Parallel < 0 || b.Parallel > 64 {
		return spec, badFieldf("parallel", "parallel %d: want 0 (default) to 64", b.Parallel)
	}
	for _, t := range b.Tables {
		if !strings.Contains(t, ".") {
			return spec, badFieldf("tables", "table %q: name it as schema.table", t)
		}
	}
	if b.Out == "" || !filepath.IsLocal(b.Out) || strings.ContainsAny(b.Out, `/\`) {
		return spec, badFieldf("out", "out %q: want a file or folder name inside the server's export folder (no path)", b.Out)
	}
	spec.Out = filepath.Join(s.cfg.ExportDir, b.Out)
	return spec, nil
}

// checkMoment refuses a moment that does not parse (or is missing).
func checkMoment(field, text string) error {
	if text == "" {
		return badFieldf(field, "%s is required", field)
	}
	if _, err := when.Parse(text); err != nil {
		return badField(field, err)
	}
	return nil
}

func (s *server) startVerify(w http.ResponseWriter, r *http.Request, body any) error {
	b := body.(*VerifyRequest)
	if err := s.common(&b.Source, &b.Label); err != nil {
		return err
	}
	if b.Snapshot == "" {
		b.Snapshot = "current"
	}
	if b.Snapshot != "current" {
		if err := jobs.CheckName("snapshot", b.Snapshot); err != nil {
			return badField("snapshot", err)
		}
	}
	for _, t := range b.Tables {
		if !strings.Contains(t, ".") {
			return badFieldf("tables", "table %q: name it as schema.table", t)
		}
	}
	return s.start(w, r, jobs.Request{Kind: jobs.Verify, Source: b.Source, Label: b.Label,
		Input: payload.VerifyInput{Source: b.Source, Snapshot: b.Snapshot, Tables: b.Tables}})
}

func (s *server) startRestore(w http.ResponseWriter, r *http.Request, body any) error {
	b := body.(*RestoreRequest)
	if err := s.common(&b.Source, &b.Label); err != nil {
		return err
	}
	if err := jobs.CheckName("target", b.Target); err != nil {
		return badField("target", err)
	}
	if err := checkMoment("at", b.At); err != nil {
		return err
	}
	if b.Parallel < 0 || b.Parallel > payload.MaxRestoreParallel {
		return badFieldf("parallel", "parallel %d: want 0 (default) to %d", b.Parallel, payload.MaxRestoreParallel)
	}
	for _, t := range b.Tables {
		if !strings.Contains(t, ".") {
			return badFieldf("tables", "table %q: name it as schema.table", t)
		}
	}
	spec := payload.RestoreSpec{Source: b.Source, At: b.At, Schemas: b.Schemas, Tables: b.Tables, Target: payload.TargetRef{Name: b.Target},
		IntoSchema: b.IntoSchema, Replace: b.Replace, NoBinlog: b.NoBinlog, Limits: throttle.Limits{
			ChunkTime: time.Duration(b.ChunkTimeMS) * time.Millisecond, MaxLag: time.Duration(b.MaxLagMS) * time.Millisecond,
			MaxLoad: b.MaxLoad, MaxRowsPerSecond: b.MaxRowsPerSecond}}
	if err := spec.Limits.Check(); err != nil {
		return badField("limits", err)
	}
	return s.start(w, r, jobs.Request{Kind: jobs.Restore, Source: b.Source, Label: b.Label, Target: jobs.RestoreLock(b.Target, b.IntoSchema, b.Schemas, b.Tables),
		Input: payload.RestoreInput{RestoreSpec: spec, Parallel: b.Parallel}})
}
