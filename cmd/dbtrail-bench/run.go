package main

import (
	"fmt"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

// thisRun names this run in the results file: its date (UTC, RFC 3339)
// and the commit of the code that measured it.
func thisRun(now time.Time) string {
	return now.UTC().Format(time.RFC3339) + ", " + commitText(buildCommit())
}

// commitText is how the results file names a commit: "commit <rev>", with
// "+ uncommitted changes" when the tree differed from it, "commit not
// recorded" when unknown.
func commitText(rev string, dirty bool) string {
	if rev == "" {
		return "commit not recorded"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		return "commit " + rev + " + uncommitted changes"
	}
	return "commit " + rev
}

// buildCommit is the commit this binary was built from: the Go build's
// VCS stamp (go build in a clone), else git in the working directory (go
// run does not stamp), else "".
func buildCommit() (rev string, dirty bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err != nil || len(strings.TrimSpace(string(status))) > 0
}

// checkVerdicts refuses rows whose target has no verdict: every row with a
// target is judged (judged), its note starting "met" or "NOT met".
func checkVerdicts(rs []result) error {
	for _, r := range rs {
		if r.target != "" && !strings.HasPrefix(r.note, "met") && !strings.HasPrefix(r.note, "NOT met") {
			return fmt.Errorf("row %q has the target %q and no verdict", r.name, r.target)
		}
	}
	return nil
}
