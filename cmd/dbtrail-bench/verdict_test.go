package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestVerdict: a measured value is met only within its goal, bounds
// included; NaN and ±Inf (nothing measured) never are; a row with several
// checks is met only when all hold; a failed condition is named.
func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		checks []check
		want   string
	}{
		{[]check{measured(1.0, atLeast(1, "%.1f"))}, "met"},
		{[]check{measured(0.97, atLeast(1, "%.1f"))}, "NOT met"},
		{[]check{measured(0.15, atMost(0.15, "%.2f"))}, "met"},
		{[]check{measured(0.151, atMost(0.15, "%.2f"))}, "NOT met"},
		{[]check{measured(0.4, within(0.4, 1, "%.1f")), measured(1.0, within(0.4, 1, "%.1f"))}, "met"},
		{[]check{measured(0.4, within(0.4, 1, "%.1f")), measured(1.1, within(0.4, 1, "%.1f"))}, "NOT met"},
		{[]check{measured(0, exactly(0, "%.0f"))}, "met"},
		{[]check{measured(10, exactly(0, "%.0f"))}, "NOT met"},
		{[]check{measured(math.NaN(), atMost(1, "%.0f"))}, "NOT met"},
		{[]check{measured(math.Inf(1), atLeast(1, "%.0f"))}, "NOT met"},
		{[]check{measured(0.5, atMost(1, "%.0f")), cond("verified", false)}, "NOT met (not verified)"},
		{[]check{measured(0.5, atMost(1, "%.0f")), cond("verified", true)}, "met"},
		{nil, "NOT met"},
	} {
		if got := verdict(c.checks...); got != c.want {
			t.Errorf("verdict(%+v) = %q, want %q", c.checks, got, c.want)
		}
	}
}

// TestJudged: the target column and the verdict come from the same goals;
// conditions and hidden checks are not shown as targets.
func TestJudged(t *testing.T) {
	r := judged("restore: rows/s", "0.97x", "best of 3", measured(0.97, atLeast(1, "%.1f")))
	if r.target != "≥ 1.0" || r.note != "NOT met; best of 3" {
		t.Errorf("restore row %+v", r)
	}
	r = judged("x", "1", "", measured(300, atMost(1024, "%.0f MiB")), cond("published", true))
	if r.target != "≤ 1024 MiB" || r.note != "met" {
		t.Errorf("row %+v", r)
	}
	r = judged("space", "0.5–0.7", "n", measured(0.5, spaceGoal), measured(0.7, spaceGoal).hide())
	if r.target != "0.4–1.0" || r.note != "met; n" {
		t.Errorf("space row %+v", r)
	}
	if g := exactlyRows(200000, " (t08)"); g.String() != "200,000 (t08)" || !g.holds(200000) || g.holds(200010) {
		t.Errorf("exactlyRows: %q", g)
	}
	if err := checkVerdicts([]result{r, {"a", "1", "", "note"}}); err != nil {
		t.Errorf("checkVerdicts: %v", err)
	}
	if err := checkVerdicts([]result{{"restore: rows/s", "0.97x", "≥ 1.0", "1000000 rows"}}); err == nil || !strings.Contains(err.Error(), "restore: rows/s") {
		t.Errorf("a row with a target and no verdict passed: %v", err)
	}
}

// TestFreshnessVerdict: the live tail's row is met only when every marker
// was seen: latencies within target over the markers seen are NOT met when
// any marker never became visible, and a run that saw none is NOT met.
func TestFreshnessVerdict(t *testing.T) {
	s := time.Second
	if v := verdict(freshChecks(s/2, 2*s, 89, 0)...); v != "met" {
		t.Errorf("all seen, fast: %q", v)
	}
	if v := verdict(freshChecks(s/2, 2*s, 10, 79)...); !strings.HasPrefix(v, "NOT met (not every marker seen (79 not))") {
		t.Errorf("79 of 89 markers never seen: %q", v)
	}
	if v := verdict(freshChecks(0, 0, 0, 90)...); !strings.HasPrefix(v, "NOT met") {
		t.Errorf("no marker seen: %q", v)
	}
	if v := verdict(freshChecks(6*s, 7*s, 89, 0)...); v != "NOT met" {
		t.Errorf("p50 6 s: %q", v)
	}
	if got := targetText(freshChecks(0, 0, 1, 0)...); got != "p50 ≤ 5 s, max ≤ 15 s" {
		t.Errorf("target %q", got)
	}
}

// TestCeilingIsADiagnosis: a ceiling row reads as a diagnosis, never a
// verdict: below the target it does not say out of reach, and a ceiling of
// 0 (no CPU reading) says so instead of being read as below the target.
func TestCeilingIsADiagnosis(t *testing.T) {
	for _, c := range []struct {
		ceiling float64
		want    string
	}{
		{0.80, "diagnosis, not a verdict: below the target 0.85"},
		{1.43, "diagnosis, not a verdict: the target 0.85 is within it"},
		{0, "diagnosis: no CPU reading"},
		{math.NaN(), "diagnosis: no CPU reading"},
	} {
		got := ceilingSays(c.ceiling, 0.85)
		if !strings.HasPrefix(got, c.want) || strings.Contains(got, "out of reach") || strings.HasPrefix(got, "met") || strings.HasPrefix(got, "NOT met") {
			t.Errorf("ceilingSays(%v) = %q, want %q…", c.ceiling, got, c.want)
		}
	}
}

// TestCommitText: the header names the commit, marked when the tree had
// changes, and says when it is unknown.
func TestCommitText(t *testing.T) {
	if got := commitText("0fe604a1234567890", false); got != "commit 0fe604a12345" {
		t.Errorf("%q", got)
	}
	if got := commitText("0fe604a", true); got != "commit 0fe604a + uncommitted changes" {
		t.Errorf("%q", got)
	}
	if got := commitText("", false); got != "commit not recorded" {
		t.Errorf("%q", got)
	}
}
