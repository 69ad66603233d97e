package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/internal/retention"
)

// The retention policy is the worker's configuration (docs/retention.md):
// `dbtrail dev` and `dbtrail worker` take it (retentionFlags) and their
// activities apply it to the refresh's prune and the Retention workflow.
// A refresh started by `dbtrail refresh`, the API or a schedule carries
// none: refresh and serve refuse the flags on their command line
// (refusedRetentionFlags).

// retentionFlagNames are the flags of the policy.
var retentionFlagNames = []string{"keep-snapshots", "keep-days", "archive-keep-days"}

// retentionFlags is a worker's retention policy.
type retentionFlags struct {
	keep        int
	keepDays    int
	archiveDays int
}

func (r *retentionFlags) register(f *pflag.FlagSet) {
	f.IntVar(&r.keep, "keep-snapshots", retention.DefaultKeepSnapshots, "newest snapshots this worker's retention keeps in the backup folder (after each refresh) and on the object store (the retention schedule); the current one always; 0 or negative keeps all")
	f.IntVar(&r.keepDays, "keep-days", 0, "also keep every snapshot made in the last N days, and what rebuilding any moment of those days needs (0: no age rule)")
	f.IntVar(&r.archiveDays, "archive-keep-days", 0, "remove archived hours older than N days that no kept snapshot needs (0 keeps every archived hour); moments of the last N days stay rebuildable")
}

// policy is the policy of the flags, checked.
func (r *retentionFlags) policy() (retention.Policy, error) {
	p := retention.Policy{KeepSnapshots: r.keep, KeepDays: r.keepDays, ArchiveKeepDays: r.archiveDays}
	return p, p.Validate()
}

// refusedRetentionFlags registers the policy's flags, hidden, on a command
// that starts refreshes for a worker (refresh, serve): given there on the
// command line they are refused (check), as the policy is the worker's.
// From the environment (DBTRAIL_KEEP_SNAPSHOTS…, which a worker started
// from the same shell reads) they are ignored.
func refusedRetentionFlags(f *pflag.FlagSet) {
	for _, name := range retentionFlagNames {
		f.String(name, "", "refused: the retention policy is the worker's (dbtrail dev or dbtrail worker)")
		if err := f.MarkHidden(name); err != nil {
			panic(err) // registered just above
		}
	}
}

// checkNoRetentionFlags refuses a retention flag given on the command line
// of cmdName (fromArgs: the flags given there).
func checkNoRetentionFlags(cmdName string, fromArgs map[string]bool) error {
	for _, name := range retentionFlagNames {
		if fromArgs[name] {
			return fmt.Errorf("dbtrail %s --%s: the retention policy is the worker's, not a refresh's: give --%s to `dbtrail worker` or `dbtrail dev` "+
				"(a refresh started by the CLI, the API or a schedule carries none, and the worker's prune keeps what its policy says; docs/retention.md)",
				cmdName, name, name)
		}
	}
	return nil
}
