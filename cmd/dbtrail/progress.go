package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/workflows"
)

const (
	// queryEvery is how often a waiter asks a run for its progress.
	queryEvery = time.Second
	// queryTimeout bounds one progress query: a busy or absent worker must
	// not hold up noticing that the run ended.
	queryTimeout = 10 * time.Second
	// lineEvery is the shortest gap between two plain progress lines of the
	// same phase.
	lineEvery = 10 * time.Second
	// quietEvery is the gap after which a plain line is printed even when
	// nothing changed, so a log shows the wait is alive.
	quietEvery = time.Minute
)

// progress is one reading of a run's "progress" query, as the CLI shows it.
type progress struct {
	phase  string // what the run does now, e.g. "converting tables"
	counts string // e.g. "3/10 tables, 1200 rows"
	bar    string // e.g. "[#########.....]"; "" draws none
}

// barLine is p as one terminal line. The phase is padded so that a line
// redrawn over a longer one leaves nothing of it behind.
func (p progress) barLine() string {
	s := fmt.Sprintf("%s — %-45s", p.counts, p.phase)
	if p.bar != "" {
		s = p.bar + " " + s
	}
	return s
}

// plainLine is p as a line of a log: no bar, no padding.
func (p progress) plainLine() string { return p.counts + " — " + p.phase }

// tablesBar is a bar of done out of total, 30 characters wide inside its
// brackets.
func tablesBar(done, total int) string {
	const width = 30
	filled := 0
	if total > 0 {
		filled = min(width, width*done/total)
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "]"
}

// queryProgress returns a reader of run's progress: its "progress" query,
// decoded as T and turned into a progress by show.
func queryProgress[T any](c client.Client, run client.WorkflowRun, show func(T) progress) func(context.Context) (progress, error) {
	return func(ctx context.Context) (progress, error) {
		v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.ProgressQuery)
		if err != nil {
			return progress{}, fmt.Errorf("query progress of %s: %w", run.GetID(), err)
		}
		var p T
		if err := v.Get(&p); err != nil {
			return progress{}, fmt.Errorf("decode progress of %s: %w", run.GetID(), err)
		}
		return show(p), nil
	}
}

// waiter waits for a started run and shows its progress on out: a bar
// redrawn in place when out is a terminal, else a plain line on every phase
// change and now and then between them, so that `dbtrail backup full > log`
// writes a readable log rather than a bar's redraws. Its fields are set by
// newWaiter; tests replace the clock and the query ticks.
type waiter struct {
	out      io.Writer
	terminal bool                              // redraw a bar; else print plain lines
	every    time.Duration                     // plain: lines of one phase at least this far apart
	quiet    time.Duration                     // plain: a line at least this often, changed or not
	now      func() time.Time                  // the clock of plain lines
	ticks    func() (<-chan time.Time, func()) // when to query progress; and how to stop that
}

// newWaiter returns a waiter that writes on out, drawing a bar only when
// out is a terminal.
func newWaiter(out io.Writer) *waiter {
	return &waiter{
		out:      out,
		terminal: isTerminal(out),
		every:    lineEvery,
		quiet:    quietEvery,
		now:      time.Now,
		ticks: func() (<-chan time.Time, func()) {
			t := time.NewTicker(queryEvery)
			return t.C, t.Stop
		},
	}
}

// isTerminal reports whether w is a character device: a terminal (or
// /dev/null, where a bar harms nobody). Pipes, files and buffers are not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// wait waits until run ends and stores its result in result, showing what
// read returns on every tick meanwhile; readings that fail are skipped. It
// returns run.Get's error, or one saying it stopped waiting when ctx ended.
func (w *waiter) wait(ctx context.Context, run client.WorkflowRun, read func(context.Context) (progress, error), result any) error {
	done := make(chan error, 1)
	go func() { done <- run.Get(ctx, result) }()
	ticks, stop := w.ticks()
	defer stop()
	view := w.view()
	for {
		select {
		case err := <-done:
			view.end()
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return fmt.Errorf("stopped waiting; %s keeps running (see the Temporal UI)", run.GetID())
			}
			return err
		case <-ticks:
			if p, err := readWithin(ctx, read); err == nil {
				view.show(p)
			}
		}
	}
}

// readWithin calls read with at most queryTimeout to answer.
func readWithin(ctx context.Context, read func(context.Context) (progress, error)) (progress, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	return read(ctx)
}

// view returns the progress view of w's output.
func (w *waiter) view() progressView {
	if w.terminal {
		return &barView{w: w.out}
	}
	return &lineView{w: w.out, every: w.every, quiet: w.quiet, now: w.now, start: w.now()}
}

// progressView shows the progress readings of one run.
type progressView interface {
	show(p progress)
	// end finishes the output after the last reading.
	end()
}

// barView redraws one line in place with a carriage return: for terminals.
type barView struct {
	w     io.Writer
	drawn bool
}

func (v *barView) show(p progress) {
	fmt.Fprintf(v.w, "\r%s", p.barLine())
	v.drawn = true
}

func (v *barView) end() {
	if v.drawn {
		fmt.Fprintln(v.w)
	}
}

// lineView prints whole lines, each after the time since the wait began:
// one for every phase change, and between them at most one per every (when
// the line changed) or per quiet (when it did not). For logs and pipes.
type lineView struct {
	w            io.Writer
	every, quiet time.Duration
	now          func() time.Time
	start        time.Time
	last         time.Time // when the last line was printed
	lastLine     string
	lastPhase    string
	printed      bool
}

func (v *lineView) show(p progress) {
	t, line := v.now(), p.plainLine()
	if v.printed && p.phase == v.lastPhase {
		since := t.Sub(v.last)
		if since < v.every || (line == v.lastLine && since < v.quiet) {
			return
		}
	}
	fmt.Fprintf(v.w, "[%s] %s\n", t.Sub(v.start).Round(time.Second), line)
	v.printed, v.last, v.lastLine, v.lastPhase = true, t, line, p.phase
}

func (v *lineView) end() {}
