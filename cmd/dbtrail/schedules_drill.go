package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// drillConfig is the scheduled restore drill that dev and worker keep
// (--drill-every): every table of the source at the latest moment restored
// into scratch schemas of a scratch server, verified, dropped.
type drillConfig struct {
	every  time.Duration
	target dsnFlag
}

func (d *drillConfig) register(f *pflag.FlagSet) {
	d.target = dsnFlag{name: "drill-target-dsn"}
	f.DurationVar(&d.every, "drill-every", 0, "interval of the scheduled restore drill into --drill-target-dsn (at least 1h; 0 deletes the schedule)")
	d.target.register(f, "scratch server of the restore drill")
}

// schedule is the drill schedule of source; an interval of 0 is the spec
// that deletes it. The target's password reaches the worker as a file
// (endpointOf): --drill-target-password-file as its absolute path (it
// must exist at that path on every worker), a password in the
// environment written to a 0600 file in the user's cache folder.
func (d *drillConfig) schedule(source, taskQueue string, fromArgs map[string]bool) (temporalclient.ScheduleSpec, error) {
	spec := temporalclient.ScheduleSpec{ID: workflows.DrillWorkflowID(source), Every: d.every, Workflow: "RestoreDrill",
		TaskQueue: taskQueue, Attrs: jobs.SourceAttrs(source)}
	if d.every == 0 {
		return spec, nil
	}
	if d.every < time.Hour {
		return spec, fmt.Errorf("--drill-every %s: the shortest drill interval is 1h (a drill restores every table)", d.every)
	}
	if d.target.value == "" {
		return spec, fmt.Errorf("--drill-every needs the scratch server: --drill-target-dsn (or %s)", envName("drill-target-dsn"))
	}
	ep, addr, _, err := endpointOf(d.target.value, "drill-target-dsn", d.target.passwordFile, fromArgs)
	if err != nil {
		return spec, err
	}
	spec.Args = []any{workflows.RestoreDrillInput{TargetAddr: addr, Restore: workflows.RestoreInput{
		RestoreSpec: activities.RestoreSpec{Source: source, At: "latest", Target: ep, Drill: true}, Parallel: 2}}}
	return spec, nil
}
