package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/internal/retention"
)

// TestRefreshAndServeRefuseARetentionPolicy: `dbtrail refresh` and
// `dbtrail serve` given --keep-snapshots, --keep-days or
// --archive-keep-days on the command line fail at once (before any
// connection: the Temporal address given is one nothing listens on),
// naming the flag and where the policy goes. From the environment the
// same names are not refused (a worker started from the same shell reads
// them).
func TestRefreshAndServeRefuseARetentionPolicy(t *testing.T) {
	run := func(args ...string) error {
		root := newRootCmd()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(append([]string{"--log-level", "error"}, args...))
		return root.ExecuteContext(context.Background())
	}
	for _, verb := range []string{"refresh", "serve"} {
		for _, flag := range retentionFlagNames {
			err := run(verb, "--temporal-addr", "127.0.0.1:1", "--"+flag, "3")
			want := "dbtrail " + verb + " --" + flag + ": the retention policy is the worker's"
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "dbtrail worker") {
				t.Errorf("%s --%s 3: %v, want an error saying %q", verb, flag, err, want)
			}
		}
	}
	t.Setenv("DBTRAIL_KEEP_SNAPSHOTS", "3")
	root := newRootCmd()
	refresh, _, err := root.Find([]string{"refresh"})
	if err != nil {
		t.Fatal(err)
	}
	fromArgs, err := applyEnv(refresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkNoRetentionFlags("refresh", fromArgs); err != nil {
		t.Fatalf("DBTRAIL_KEEP_SNAPSHOTS in the environment refused: %v", err)
	}
}

// TestWorkerRetentionFlags: a worker's --keep-snapshots, --keep-days and
// --archive-keep-days are its policy (default: keep
// retention.DefaultKeepSnapshots); a negative age is refused.
func TestWorkerRetentionFlags(t *testing.T) {
	parse := func(args ...string) (retention.Policy, error) {
		w := newWorkerConfig()
		f := pflag.NewFlagSet("worker", pflag.ContinueOnError)
		w.register(f)
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		return w.retention.policy()
	}
	if p, err := parse(); err != nil || p != (retention.Policy{KeepSnapshots: retention.DefaultKeepSnapshots}) {
		t.Fatalf("default policy %+v %v", p, err)
	}
	p, err := parse("--keep-snapshots", "100", "--keep-days", "7", "--archive-keep-days", "30")
	if err != nil || p != (retention.Policy{KeepSnapshots: 100, KeepDays: 7, ArchiveKeepDays: 30}) {
		t.Fatalf("policy %+v %v", p, err)
	}
	if _, err := parse("--keep-days", "-1"); err == nil || !strings.Contains(err.Error(), "--keep-days -1") {
		t.Fatalf("--keep-days -1: %v", err)
	}
}
