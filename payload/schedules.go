package payload

import (
	"fmt"
	"strings"
	"time"
)

// Schedule is one of the Temporal schedules `dbtrail dev` and `dbtrail
// worker` keep for a source: the workflow it starts, under which schedule
// ID, how often by default and at the most. The CLI builds each
// schedule's input from its flags; the console and the API read the
// schedules by these IDs.
type Schedule struct {
	// Name is what it runs, as the console and the flags (--<name>-every)
	// name it: refresh, archive, verify, drill or retention.
	Name string
	// Workflow is the workflow type it starts.
	Workflow string
	// ID is the schedule's ID for a source (also its runs' workflow ID
	// prefix).
	ID func(source string) string
	// Default is its interval when no flag says otherwise (0: kept only
	// when asked for).
	Default time.Duration
	// Min is the shortest interval it accepts, and Why why ("" for none).
	Min time.Duration
	Why string
}

// Schedules is the one table of a source's schedules, in the order they
// are kept and shown.
var Schedules = []Schedule{
	{Name: "refresh", Workflow: "Refresh", ID: RefreshWorkflowID, Default: DefaultRefreshEvery, Min: time.Minute},
	{Name: "archive", Workflow: "Archive", ID: ArchiveWorkflowID, Default: DefaultArchiveEvery, Min: DefaultArchiveEvery},
	{Name: "verify", Workflow: "Verify", ID: VerifyWorkflowID, Default: DefaultVerifyEvery, Min: time.Hour,
		Why: "a verify reads every table on the source"},
	{Name: "drill", Workflow: "RestoreDrill", ID: DrillWorkflowID, Min: time.Hour, Why: "a drill restores every table"},
	{Name: "retention", Workflow: "Retention", ID: RetentionWorkflowID, Default: DefaultRetentionEvery, Min: time.Minute},
}

// ScheduleNamed is the schedule of Schedules called name; it panics on a
// name that is not there (a programming error: the names are constants).
func ScheduleNamed(name string) Schedule {
	for _, s := range Schedules {
		if s.Name == name {
			return s
		}
	}
	panic(fmt.Sprintf("payload: no schedule named %q", name))
}

// CheckEvery refuses an interval shorter than the schedule's minimum,
// naming flag; 0 (no schedule) is accepted.
func (s Schedule) CheckEvery(flag string, every time.Duration) error {
	if every == 0 || every >= s.Min {
		return nil
	}
	why := ""
	if s.Why != "" {
		why = " (" + s.Why + ")"
	}
	return fmt.Errorf("%s %s: the shortest %s interval is %s%s", flag, every, s.Name, shortDuration(s.Min), why)
}

// shortDuration is d without its zero minutes and seconds: 1h, 1m, 1h30m.
func shortDuration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}
