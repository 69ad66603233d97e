package main

import (
	"fmt"
	"math"
	"strings"
)

// goal is a target a measured value is judged against: within [lo, hi]
// (an open side is ±Inf). label names the value when a row judges several
// ("p50"); format prints a bound ("%.2f", "%.0f MiB"), or show when set.
type goal struct {
	label  string
	lo, hi float64
	format string
	show   func(float64) string
}

// atLeast is the goal "≥ v", atMost "≤ v", within "lo–hi", exactly "v".
func atLeast(v float64, format string) goal { return goal{lo: v, hi: math.Inf(1), format: format} }
func atMost(v float64, format string) goal  { return goal{lo: math.Inf(-1), hi: v, format: format} }
func within(lo, hi float64, format string) goal {
	return goal{lo: lo, hi: hi, format: format}
}
func exactly(v float64, format string) goal { return goal{lo: v, hi: v, format: format} }

// exactlyRows is the goal of exactly n rows, printed with thousands
// separators and then suffix.
func exactlyRows(n int, suffix string) goal {
	g := exactly(float64(n), "")
	g.show = func(v float64) string { return thousands(int(v)) + suffix }
	return g
}

// of names the value g judges.
func (g goal) of(label string) goal { g.label = label; return g }

// String is the target column's text of g.
func (g goal) String() string {
	f := func(v float64) string { return fmt.Sprintf(g.format, v) }
	if g.show != nil {
		f = g.show
	}
	var s string
	switch {
	case g.lo == g.hi:
		s = f(g.lo)
	case math.IsInf(g.hi, 1):
		s = "≥ " + f(g.lo)
	case math.IsInf(g.lo, -1):
		s = "≤ " + f(g.hi)
	default:
		s = f(g.lo) + "–" + f(g.hi)
	}
	if g.label != "" {
		s = g.label + " " + s
	}
	return s
}

// holds reports whether v is a measured number within g: NaN and ±Inf
// (nothing measured, a division by zero) never are.
func (g goal) holds(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= g.lo && v <= g.hi
}

// check is one measured value of a row and the goal it is judged by. A
// condition (cond) is a check the target column does not show: a fact
// the verdict also needs (the table verified, every marker seen).
type check struct {
	v      float64
	g      goal
	hidden bool
}

// cond is a condition a verdict needs besides the row's measures, named by
// what (it says why a NOT met is one).
func cond(what string, ok bool) check {
	v := 0.0
	if ok {
		v = 1
	}
	return check{v: v, g: exactly(1, "%.0f").of(what), hidden: true}
}

// verdict is "met" when there is at least one check and every one holds,
// else "NOT met" followed by the failed conditions' names.
func verdict(ms ...check) string {
	var failed []string
	ok := len(ms) > 0
	for _, m := range ms {
		if !m.g.holds(m.v) {
			ok = false
			if m.hidden {
				failed = append(failed, "not "+m.g.label)
			}
		}
	}
	if ok {
		return "met"
	}
	if len(failed) > 0 {
		return "NOT met (" + strings.Join(failed, ", ") + ")"
	}
	return "NOT met"
}

// targetText is the target column of a row judged by ms: its shown goals.
func targetText(ms ...check) string {
	var parts []string
	for _, m := range ms {
		if !m.hidden {
			parts = append(parts, m.g.String())
		}
	}
	return strings.Join(parts, ", ")
}

// judged is a row with a target: its target column and its verdict (the
// note's first words) both come from ms, the measured values and their
// goals, so that the two cannot disagree.
func judged(name, value, note string, ms ...check) result {
	v := verdict(ms...)
	if note != "" {
		v += "; " + note
	}
	return result{name: name, value: value, target: targetText(ms...), note: v}
}

// hide makes c a check the target column does not show (a second value
// judged by a goal already shown).
func (c check) hide() check { c.hidden = true; return c }

// measured is the check of v against g.
func measured(v float64, g goal) check { return check{v: v, g: g} }
