package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/jobs"
)

// scheduleJobs is fakeJobs with schedules.
type scheduleJobs struct {
	fakeJobs
	asked string
}

func (s *scheduleJobs) Schedules(_ context.Context, source string) ([]jobs.ScheduleState, error) {
	s.asked = source
	next := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	return []jobs.ScheduleState{{Name: "refresh", ID: "refresh-" + source, Every: "15m0s", NextAt: &next}}, nil
}

// windowCatalog is a Catalog with an index window.
type windowCatalog struct{ manifestCatalog }

func (windowCatalog) IndexWindow(_ context.Context, source string) (IndexWindow, error) {
	return IndexWindow{Source: source, Hours: []IndexHour{{Hour: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Events: 3}}, Events: 3,
		Gaps: []CaptureGap{{From: "b.000001:4", To: "b.000003:4", Reason: "purged"}}, LastDrill: &Drill{Verdict: "ok"}}, nil
}

// getRaw is GET path with token: the status and the body.
func (f *fixture) getRaw(path, token string) (int, []byte) {
	f.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = testAddr
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestSchedulesAndIndexWindow: GET /v1/schedules and /v1/index answer what
// the Jobs and the Catalog read, for a read-only token, of the asked
// source; a bad source is 400 naming it; without the readers they are 501.
func TestSchedulesAndIndexWindow(t *testing.T) {
	sj := &scheduleJobs{}
	f := newFixture(t, true, func(c *Config) { c.Jobs, c.Catalog = sj, windowCatalog{} })
	st, body := f.getRaw("/v1/schedules?source=shop", roSecret)
	var list []jobs.ScheduleState
	if st != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 || list[0].ID != "refresh-shop" || sj.asked != "shop" {
		t.Fatalf("GET /v1/schedules: %d %s", st, body)
	}
	st, body = f.getRaw("/v1/index", roSecret)
	var w IndexWindow
	if st != 200 || json.Unmarshal(body, &w) != nil || w.Source != "main" || len(w.Hours) != 1 || len(w.Gaps) != 1 || w.LastDrill.Verdict != "ok" {
		t.Fatalf("GET /v1/index: %d %s", st, body)
	}
	for _, p := range []string{"/v1/schedules?source=a%20b", "/v1/index?source=a%20b"} {
		st, out, _ := f.do("GET", p, roSecret, "")
		if code, field := errOf(t, out); st != 400 || code != CodeBadRequest || field != "source" {
			t.Fatalf("GET %s: %d %v", p, st, out)
		}
	}
	if st, _, _ := f.do("GET", "/v1/schedules", "", ""); st != 401 {
		t.Fatalf("GET /v1/schedules without a token: %d", st)
	}
	plain := newFixture(t, true)
	for _, p := range []string{"/v1/schedules", "/v1/index"} {
		st, out, _ := plain.do("GET", p, roSecret, "")
		if code, _ := errOf(t, out); st != 501 || code != CodeNotConfigured {
			t.Fatalf("GET %s without a reader: %d %v", p, st, out)
		}
	}
}
