package api

import (
	"context"
	"net/http"

	"github.com/dbtrail/dbtrail/jobs"
)

// ScheduleReader is the part of Config.Jobs that answers GET
// /v1/schedules (*jobs.Service has it): a source's Temporal schedules,
// read only.
type ScheduleReader interface {
	Schedules(ctx context.Context, source string) ([]jobs.ScheduleState, error)
}

// schedules answers GET /v1/schedules: when the source's refresh, archive,
// verify, drill and retention schedules run next, and their last start
// with its job's state and result.
func (s *server) schedules(w http.ResponseWriter, r *http.Request, _ any) error {
	sr, ok := s.cfg.Jobs.(ScheduleReader)
	if !ok {
		return &Error{Status: http.StatusNotImplemented, Code: CodeNotConfigured, Message: "this server reads no schedules"}
	}
	src, err := s.source(r)
	if err != nil {
		return err
	}
	list, err := sr.Schedules(r.Context(), src)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}
