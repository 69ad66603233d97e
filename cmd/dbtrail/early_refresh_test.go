package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/payload"
)

// TestEarlyRefreshFlags: the defaults are the documented ones, 0 turns the
// watch off, a negative bound or a sub-second check is refused.
func TestEarlyRefreshFlags(t *testing.T) {
	var e earlyRefreshConfig
	f := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	e.register(f)
	if e.events != 1_000_000 || e.every != 10*time.Second {
		t.Fatalf("defaults %+v", e)
	}
	acts := &activities.Activities{BackupDir: t.TempDir()}
	for _, c := range []struct {
		args []string
		err  string
		on   bool
	}{
		{[]string{"--early-refresh-events", "0"}, "", false},
		{[]string{"--early-refresh-events", "-1"}, "--early-refresh-events -1", false},
		{[]string{"--early-refresh-events", "5", "--early-refresh-check", "500ms"}, "--early-refresh-check 500ms", false},
		{[]string{"--early-refresh-events", "5", "--early-refresh-check", "2s"}, "", true},
	} {
		var e earlyRefreshConfig
		f := pflag.NewFlagSet("worker", pflag.ContinueOnError)
		e.register(f)
		if err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		run, err := e.watch(nil, "default", "dbtrail", "main", payload.RefreshInput{}, acts, nil, nil)
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) || (run != nil) != c.on {
			t.Errorf("%v: watch %v, %v; want error %q, on %v", c.args, run != nil, err, c.err, c.on)
		}
	}
}
