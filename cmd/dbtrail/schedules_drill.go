package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
)

// drillConfig is the scheduled restore drill that dev and worker keep
// (--drill-every): every table of the source at the latest moment restored
// into scratch schemas of a restore target, verified, dropped.
type drillConfig struct {
	every  time.Duration
	target string
}

func (d *drillConfig) register(f *pflag.FlagSet) {
	f.DurationVar(&d.every, "drill-every", 0, "interval of the scheduled restore drill into --drill-target (at least 1h; 0 deletes the schedule)")
	f.StringVar(&d.target, "drill-target", "", "restore target (of --restore-targets, on every worker) of the restore drill; it must allow the drill's schemas dbtrail_drill_*")
}

// schedule is the drill schedule of source; an interval of 0 is the spec
// that deletes it. The drill names its target; each worker resolves the
// name from its own --restore-targets.
func (d *drillConfig) schedule(source, taskQueue string) (temporalclient.ScheduleSpec, error) {
	sc := payload.ScheduleNamed("drill")
	spec := scheduleSpec(sc, source, taskQueue, d.every, nil)
	if d.every == 0 {
		return spec, nil
	}
	if err := sc.CheckEvery("--drill-every", d.every); err != nil {
		return spec, err
	}
	if d.target == "" {
		return spec, fmt.Errorf("--drill-every needs a restore target: --drill-target (or %s)", envName("drill-target"))
	}
	if err := jobs.CheckName("--drill-target", d.target); err != nil {
		return spec, err
	}
	spec.Args = []any{payload.RestoreDrillInput{TargetAddr: d.target, Restore: payload.RestoreInput{
		RestoreSpec: payload.RestoreSpec{Source: source, At: "latest", Target: payload.TargetRef{Name: d.target}, Drill: true}, Parallel: 2}}}
	return spec, nil
}
