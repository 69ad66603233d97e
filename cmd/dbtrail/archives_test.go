package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/payload"
)

func TestArchivesFormat(t *testing.T) {
	h := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	list := []archiveEntry{
		{Hour: h, Events: 1200, Bytes: 52311, FirstSeq: 1, LastSeq: 1200, Location: "s3://b/p at http://x", Object: "main/archives/2026-11-29/08.parquet",
			Confirmed: h.Add(25 * time.Hour), Dropped: h.Add(25 * time.Hour), Stored: "ok"},
		{Hour: h.Add(time.Hour), Events: 7, Bytes: 900, FirstSeq: 1201, LastSeq: 1207, InIndex: 7, Location: "s3://b/p at http://x",
			Object: "main/archives/2026-11-29/09.parquet"},
	}
	var b strings.Builder
	if err := writeArchives(&b, "main", list); err != nil {
		t.Fatal(err)
	}
	want := `source main: 2 hours archived, 1207 events, 52.0 KiB; 1 not confirmed
HOUR (UTC)        EVENTS  BYTES     SEQS        IN INDEX  CONFIRMED             STORED  WHERE
2026-11-29 08:00  1200    51.1 KiB  1..1200     0         2026-11-30T09:00:00Z  ok      s3://b/p at http://x: main/archives/2026-11-29/08.parquet
2026-11-29 09:00  7       900 B     1201..1207  7         no                    -       s3://b/p at http://x: main/archives/2026-11-29/09.parquet
`
	if got := b.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestScheduleSpecs: dev and worker keep an hourly archive schedule with
// --index-hours, also when the refresh schedule is left alone; the verify,
// drill and retention schedules at 0 are the specs that delete them; a
// retention schedule carries no policy (the worker's applies); --drill-every
// needs a scratch server, whose password reaches the worker as a file.
func TestScheduleSpecs(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := scheduleConfig{refreshEvery: 0, indexHours: 48}
	specs, err := s.specs("main", "dbtrail", nil, log)
	if err != nil || len(specs) != 4 || specs[0].ID != "verify-main" || specs[0].Every != 0 || specs[1].ID != "restore-drill-main" || specs[1].Every != 0 ||
		specs[2].ID != "retention-main" || specs[2].Every != 0 {
		t.Fatalf("specs %+v %v; want the verify, drill and retention schedules (deleted: every 0) and the archive schedule", specs, err)
	}
	s.retainEvery = time.Hour
	specs, err = s.specs("main", "dbtrail", nil, log)
	if err != nil || len(specs) != 4 || specs[2].ID != "retention-main" || specs[2].Every != time.Hour || specs[2].Workflow != "Retention" {
		t.Fatalf("specs %+v %v; want an hourly retention schedule", specs, err)
	}
	if rin, ok := specs[2].Args[0].(payload.RetentionInput); !ok || rin != (payload.RetentionInput{Source: "main"}) {
		t.Fatalf("retention schedule %+v: want the source alone (the policy is the worker's)", specs[2])
	}
	s.retainEvery = 0
	a := specs[3]
	in, ok := a.Args[0].(payload.ArchiveInput)
	if a.ID != "archive-main" || a.Every != time.Hour || a.Workflow != "Archive" || !ok || in.IndexHours != 48 || in.Source != "main" {
		t.Fatalf("archive schedule %+v", a)
	}
	s = scheduleConfig{refreshEvery: 5 * time.Minute, indexHours: 24}
	if specs, err := s.specs("main", "dbtrail", nil, log); err != nil || len(specs) != 5 || specs[0].ID != "refresh-main" {
		t.Fatalf("specs %+v %v", specs, err)
	}
	s.indexHours = 0
	if _, err := s.specs("main", "dbtrail", nil, log); err == nil {
		t.Fatal("--index-hours 0 accepted")
	}

	s = scheduleConfig{indexHours: 24}
	s.drill.every = 24 * time.Hour
	if _, err := s.specs("main", "dbtrail", nil, log); err == nil || !strings.Contains(err.Error(), "--drill-target") {
		t.Fatalf("--drill-every without a target: %v", err)
	}
	s.drill.target = "db9@tcp(db9:3306)/"
	if _, err := s.specs("main", "dbtrail", nil, log); err == nil || !strings.Contains(err.Error(), "--drill-target") {
		t.Fatalf("a DSN as the drill's target: %v", err)
	}
	s.drill.target = "scratch"
	specs, err = s.specs("main", "dbtrail", nil, log)
	if err != nil {
		t.Fatal(err)
	}
	d := specs[1]
	din, ok := d.Args[0].(payload.RestoreDrillInput)
	if d.ID != "restore-drill-main" || d.Workflow != "RestoreDrill" || d.Every != 24*time.Hour || !ok || din.TargetAddr != "scratch" ||
		!din.Restore.Drill || din.Restore.At != "latest" || din.Restore.Target.Name != "scratch" || din.Restore.Target.AdHoc != nil {
		t.Fatalf("drill schedule %+v", d)
	}
	s.drill.every = time.Minute
	if _, err := s.specs("main", "dbtrail", nil, log); err == nil || !strings.Contains(err.Error(), "--drill-every 1m0s") {
		t.Fatalf("--drill-every 1m: %v", err)
	}
}
