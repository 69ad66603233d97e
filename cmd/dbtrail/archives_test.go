package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/workflows"
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
// --index-hours, also when the refresh schedule is left alone.
func TestScheduleSpecs(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := scheduleConfig{refreshEvery: 0, indexHours: 48}
	specs, err := s.specs("main", "dbtrail", log)
	if err != nil || len(specs) != 2 || specs[0].ID != "verify-main" || specs[0].Every != 0 {
		t.Fatalf("specs %+v %v; want the verify schedule (deleted: --verify-every 0) and the archive schedule", specs, err)
	}
	a := specs[1]
	in, ok := a.Args[0].(workflows.ArchiveInput)
	if a.ID != "archive-main" || a.Every != time.Hour || a.Workflow != "Archive" || !ok || in.IndexHours != 48 || in.Source != "main" {
		t.Fatalf("archive schedule %+v", a)
	}
	s = scheduleConfig{refreshEvery: 5 * time.Minute, indexHours: 24}
	if specs, err := s.specs("main", "dbtrail", log); err != nil || len(specs) != 3 || specs[0].ID != "refresh-main" {
		t.Fatalf("specs %+v %v", specs, err)
	}
	s.indexHours = 0
	if _, err := s.specs("main", "dbtrail", log); err == nil {
		t.Fatal("--index-hours 0 accepted")
	}
}
