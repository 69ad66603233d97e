package payload

import (
	"testing"
	"time"
)

// TestSchedules: the table names five schedules with distinct names and
// IDs, each ID its workflow's; CheckEvery accepts 0 and the minimum, and
// refuses below it naming the flag, the minimum and why.
func TestSchedules(t *testing.T) {
	names, ids := map[string]bool{}, map[string]bool{}
	for _, s := range Schedules {
		if names[s.Name] || ids[s.ID("main")] {
			t.Errorf("schedule %s: a name or ID twice", s.Name)
		}
		names[s.Name], ids[s.ID("main")] = true, true
		if s.Default != 0 && s.Default < s.Min {
			t.Errorf("schedule %s: default %s below its minimum %s", s.Name, s.Default, s.Min)
		}
	}
	if len(Schedules) != 5 || ScheduleNamed("refresh").ID("main") != RefreshWorkflowID("main") ||
		ScheduleNamed("drill").ID("main") != DrillWorkflowID("main") {
		t.Errorf("schedules %v", names)
	}
	v := ScheduleNamed("verify")
	for _, ok := range []time.Duration{0, time.Hour, 24 * time.Hour} {
		if err := v.CheckEvery("--verify-every", ok); err != nil {
			t.Errorf("verify every %s: %v", ok, err)
		}
	}
	want := "--verify-every 59m0s: the shortest verify interval is 1h (a verify reads every table on the source)"
	if err := v.CheckEvery("--verify-every", 59*time.Minute); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	want = "--refresh-every 30s: the shortest refresh interval is 1m"
	if err := ScheduleNamed("refresh").CheckEvery("--refresh-every", 30*time.Second); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	for d, s := range map[time.Duration]string{time.Hour: "1h", time.Minute: "1m", 90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s"} {
		if got := shortDuration(d); got != s {
			t.Errorf("shortDuration(%s) = %s, want %s", d, got, s)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ScheduleNamed of an unknown name did not panic")
		}
	}()
	ScheduleNamed("nightly")
}
