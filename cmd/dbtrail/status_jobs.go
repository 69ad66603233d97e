package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/jobs"
)

// writeJobsStatus prints what status asks of Temporal: the last verify's
// verdict per table, the last retention run and what the next one would
// remove (a worker plans it now). A part that cannot be read says why;
// status goes on.
func writeJobsStatus(ctx context.Context, out io.Writer, svc *jobs.Service, source string) {
	res, closed, ok, err := lastVerify(ctx, svc, source)
	switch {
	case err != nil:
		fmt.Fprintf(out, "  last verify unreadable: %v\n", err)
	case !ok:
		fmt.Fprintln(out, "  last verify none (dbtrail verify, or --verify-every on dev/worker)")
	default:
		fmt.Fprintf(out, "  last verify %s of snapshot %s: %d match, %d MISMATCH, %d inconclusive, %d errors\n",
			time.Unix(int64(closed), 0).UTC().Format(time.RFC3339), res.SnapshotID, res.Match, res.Mismatch, res.Inconclusive, res.Errors)
		for _, v := range res.Tables {
			fmt.Fprintf(out, "              %-12s %s%s\n", strings.ToUpper(v.Verdict), v.Table, verdictNote(v))
		}
	}
	writeLastRetention(ctx, out, svc, source)
	pctx, cancel := context.WithTimeout(ctx, previewWait)
	defer cancel()
	next, ok, err := svc.PreviewRetention(pctx, source)
	switch {
	case err != nil:
		fmt.Fprintf(out, "  next retention unknown: %v\n", err)
	case !ok:
		fmt.Fprintln(out, "  next retention none: no retention schedule (dev and worker keep one, --retention-every)")
	default:
		when := "at its next run"
		if next.NextAt != nil {
			when = "at " + next.NextAt.Format(time.RFC3339)
		}
		fmt.Fprintf(out, "  next retention %s (the worker's policy: keep %d snapshots, %d days, archives %d days) would remove %d:\n",
			when, next.Policy.KeepSnapshots, next.Policy.KeepDays, next.Policy.ArchiveKeepDays, len(next.Remove))
		for _, it := range next.Remove {
			fmt.Fprintf(out, "              %-8s %s  (%s)\n", it.Place, it.ID, it.Reason)
		}
	}
}

func verdictNote(v calls.TableVerdict) string {
	switch {
	case v.Error != "":
		return ": " + v.Error
	case v.Reason != "":
		return ": " + v.Reason
	}
	return ""
}

// writeLastRetention prints what the last retention run removed and what
// Object Lock refused.
func writeLastRetention(ctx context.Context, out io.Writer, svc *jobs.Service, source string) {
	j, ok, err := svc.Last(ctx, jobs.Retention, source)
	switch {
	case err != nil:
		fmt.Fprintf(out, "  last retention unreadable: %v\n", err)
		return
	case !ok:
		fmt.Fprintln(out, "  last retention none")
		return
	case j.Error != "":
		fmt.Fprintf(out, "  last retention %s %s: %s\n", j.StartedAt.Format(time.RFC3339), strings.ToUpper(string(j.State)), j.Error)
		return
	}
	var res calls.RetentionResult
	if err := json.Unmarshal(j.Result, &res); err != nil {
		fmt.Fprintf(out, "  last retention unreadable result: %v\n", err)
		return
	}
	fmt.Fprintf(out, "  last retention %s: removed %d, refused by Object Lock %d, failed %d, kept for a locked snapshot %d%s\n",
		j.StartedAt.Format(time.RFC3339), len(res.Removed), len(res.Locked), len(res.Failed), len(res.Held), skipped(res.Skipped))
	for _, l := range append(res.Locked, res.Failed...) {
		fmt.Fprintf(out, "              NOT REMOVED %s %s: %s\n", l.Place, l.ID, l.Error)
	}
}

func skipped(s string) string {
	if s == "" {
		return ""
	}
	return "; skipped: " + s
}
