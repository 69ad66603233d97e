package main

import (
	"fmt"
	"math"
	"strings"
)

// ddlResults are the rows of the ddl benchmark: the setup, the full
// backup, the no-change refresh and, per schema change, its refresh, its
// time ÷ the full backup's and the rows it read from the source, each with
// its verdict.
func ddlResults(e *scaleEnv, full ddlFull, idle ddlRun, runs []ddlRun) []result {
	all := int64(e.tables) * int64(e.rows)
	idleRatio := idle.run.elapsed.Seconds() / full.took.Seconds()
	out := []result{
		{"ddl: tables × rows", fmt.Sprintf("%d × %s", e.tables, thousands(e.rows)), "",
			"schema app, id INT key, pad VARCHAR(60), n BIGINT, d DECIMAL(12,3) (the scale benchmark's tables); one worker, capture running; full backup, a refresh with no change, then per schema change the statement, capture caught up, a Refresh (table deltas); one run each"},
		{"ddl: full backup", fmt.Sprintf("%.2f s", full.took.Seconds()), "",
			fmt.Sprintf("FullBackup of every table (mydumper, conversion, publish, upload): %s rows; source Rows_read +%s", thousands(int(all)), thousands(int(full.rowsRead)))},
		{"ddl: refresh with no change", fmt.Sprintf("%.2f s", idle.run.elapsed.Seconds()), "",
			fmt.Sprintf("%.3f of the full backup: the fixed cost of a refresh; decisions %s; steps s %s", idleRatio, decisions(idle.res.Tables), stepsText(idle.run))},
	}
	for _, r := range runs {
		out = append(out, r.rows(full, all, e.rows)...)
	}
	return out
}

// rows are a schema change's rows: its refresh, the time ratio and the
// rows read from the source (all rows in the source, per in a table).
func (r ddlRun) rows(full ddlFull, all int64, per int) []result {
	name := fmt.Sprintf("ddl: refresh after `%s`", r.c.stmt)
	ratioName := "ddl: ratio time / full backup, " + r.c.label
	rowsName := "ddl: rows read from the source, " + r.c.label
	ratioGoal := atMost(r.c.target, "%.2f")
	if r.err != nil {
		msg := "the refresh failed: " + cell(tail(r.err.Error(), 300))
		failed := cond("refreshed", false)
		return []result{{name, "failed", "", msg}, judged(ratioName, "–", msg, measured(math.NaN(), ratioGoal), failed),
			judged(rowsName, "–", msg, failed)}
	}
	ratio := r.run.elapsed.Seconds() / full.took.Seconds()
	published := r.res.SnapshotID != "" && !r.res.Refused
	right := strings.HasPrefix(r.verify, "match")
	note := fmt.Sprintf("%s; decisions %s; verify %s after the refresh: %s; steps s %s", cell(decisionOf(r.res.Tables, "app."+r.c.table)),
		decisions(r.res.Tables), r.c.table, cell(r.verify), stepsText(r.run))
	if !published {
		note = "published nothing itself (refused: " + cell(strings.Join(r.res.Reasons, "; ")) + "); " + note
	}
	got, how := r.sourceRows(all)
	want := exactlyRows(0, "")
	if r.c.redump {
		want = exactlyRows(per, " ("+r.c.table+")")
	}
	redumped := r.c.redump == (r.res.Redump != nil)
	if r.c.redump && r.res.Redump != nil {
		redumped = len(r.res.Redump.Tables) == 1 && r.res.Redump.Tables[0] == "app."+r.c.table
	}
	return []result{
		{name, fmt.Sprintf("%.2f s", r.run.elapsed.Seconds()), "", note},
		judged(ratioName, fmt.Sprintf("%.3f", ratio), fmt.Sprintf("%.2f s / %.2f s; the table verified: %s", r.run.elapsed.Seconds(), full.took.Seconds(), r.verdictWord()),
			measured(ratio, ratioGoal), cond("published", published), cond("verified", right)),
		judged(rowsName, thousands(int(got)), fmt.Sprintf("%s; source Rows_read +%s during the refresh", cell(how), thousands(int(r.rowsRead))),
			measured(float64(got), want), cond("no full backup", r.res.FullBackup == ""), cond("re-dumped as planned", redumped)),
	}
}

// cell makes s safe inside a Markdown table cell (no pipes, no newlines).
func cell(s string) string {
	return strings.NewReplacer("|", "/", "\n", " ").Replace(s)
}

// verdictWord is the first word of the changed table's verify verdict
// ("match", "mismatch", …; "none" when it was not verified).
func (r ddlRun) verdictWord() string {
	w, _, _ := strings.Cut(r.verify, ":")
	if w == "" {
		return "none"
	}
	return w
}
