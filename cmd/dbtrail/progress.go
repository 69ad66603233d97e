package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/internal/shell"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/embedded"
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
	// retry is the steps that failed and are retried, e.g. "retrying
	// RefreshTable (attempt 3 of 10): … ; next attempt in 20s"; "" once
	// they succeed.
	retry string
}

// barLine is p as one terminal line. The phase is padded so that a line
// redrawn over a longer one leaves nothing of it behind.
func (p progress) barLine() string {
	s := fmt.Sprintf("%s — %-45s", p.counts, p.phase)
	if p.bar != "" {
		s = p.bar + " " + s
	}
	return s + p.retryNote()
}

// plainLine is p as a line of a log: no bar, no padding.
func (p progress) plainLine() string { return p.counts + " — " + p.phase + p.retryNote() }

// retryNote is p's retries after the progress, or "".
func (p progress) retryNote() string {
	if p.retry == "" {
		return ""
	}
	return " ! " + p.retry
}

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
		v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), payload.ProgressQuery)
		if err != nil {
			return progress{}, fmt.Errorf("query progress of %s: %w", run.GetID(), err)
		}
		var p T
		if err := v.Get(&p); err != nil {
			return progress{}, fmt.Errorf("decode progress of %s: %w", run.GetID(), err)
		}
		out := show(p)
		out.retry = retries(ctx, c, run)
		return out, nil
	}
}

// retries describes the steps of run that failed and are retried, from its
// pending activities (jobs.Retries); "" when none has failed or the run
// cannot be described.
func retries(ctx context.Context, c client.Client, run client.WorkflowRun) string {
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	if err != nil {
		return ""
	}
	var parts []string
	now := time.Now()
	for _, r := range jobs.Retries(d) {
		parts = append(parts, r.String(now))
	}
	return strings.Join(parts, " | ")
}

// temporalFlags are the flags of a verb that starts a workflow and waits
// for it: how to reach Temporal (temporal_conn.go) and its web UI.
type temporalFlags struct {
	addr, namespace, ui string
	creds               temporalCreds
}

func (f *temporalFlags) register(fs *pflag.FlagSet) {
	f.registerConn(fs)
	fs.StringVar(&f.ui, "temporal-ui", "", "base URL of the Temporal web UI, for links to runs (default: dbtrail dev's UI, http://"+
		embedded.DefaultUIAddr+", when --temporal-addr is dev's default)")
}

// location is where the runs started through f can be followed. Without
// --temporal-ui the UI is dbtrail dev's default one when --temporal-addr is
// dev's default frontend, and unknown otherwise.
func (f *temporalFlags) location() runLocation {
	ui := f.ui
	if ui == "" && f.addr == embedded.DefaultFrontendAddr {
		ui = "http://" + embedded.DefaultUIAddr
	}
	return runLocation{addr: f.addr, namespace: f.namespace, ui: strings.TrimRight(ui, "/")}
}

// runLocation is where a user can follow a run: its Temporal frontend and
// namespace, and the web UI's base URL ("" when unknown).
type runLocation struct {
	addr, namespace, ui string
}

// writeFollow writes, indented, how to follow the run id (run runID): its
// page in the web UI when the UI is known, and a Temporal CLI command.
func (l runLocation) writeFollow(w io.Writer, id, runID string) {
	if l.ui != "" {
		fmt.Fprintf(w, "  Temporal UI   %s/namespaces/%s/workflows/%s/%s/history\n",
			l.ui, url.PathEscape(l.namespace), url.PathEscape(id), url.PathEscape(runID))
	}
	fmt.Fprintf(w, "  Temporal CLI  %s\n", l.command("describe", id, runID))
}

// command is the Temporal CLI command that runs `temporal workflow verb` on
// the run id (run runID).
func (l runLocation) command(verb, id, runID string) string {
	return fmt.Sprintf("temporal workflow %s --address %s --namespace %s --workflow-id %s --run-id %s",
		verb, l.addr, l.namespace, id, runID)
}

// waiter waits for a started run and shows its progress on out: a bar
// redrawn in place when out is a terminal, else a plain line on every phase
// change and now and then between them, so that `dbtrail backup full > log`
// writes a readable log rather than a bar's redraws. When the run does not
// complete, or the waiter stops waiting, it tells why and where to follow
// the run. Its fields are set by newWaiter; tests replace the clock and the
// query ticks.
type waiter struct {
	out      io.Writer
	where    runLocation                       // where the user can follow the run
	terminal bool                              // redraw a bar; else print plain lines
	every    time.Duration                     // plain: lines of one phase at least this far apart
	quiet    time.Duration                     // plain: a line at least this often, changed or not
	now      func() time.Time                  // the clock of plain lines
	ticks    func() (<-chan time.Time, func()) // when to query progress; and how to stop that
}

// newWaiter returns a waiter that writes on out, drawing a bar only when
// out is a terminal, and points at runs in where.
func newWaiter(out io.Writer, where runLocation) *waiter {
	return &waiter{
		out:      out,
		where:    where,
		terminal: shell.IsTerminal(out),
		every:    lineEvery,
		quiet:    quietEvery,
		now:      time.Now,
		ticks: func() (<-chan time.Time, func()) {
			t := time.NewTicker(queryEvery)
			return t.C, t.Stop
		},
	}
}

// wait waits until run, a workflow of type kind, ends and stores its result
// in result, showing what read returns on every tick meanwhile; readings
// that fail are skipped. It returns nil when the run completed, a
// *runFailedError naming the root cause when it ended otherwise, and a
// *stoppedWaitingError saying why when it stops waiting for a run that goes
// on (ctx ended: Ctrl-C, a timeout; the result could not be read). The
// last two first write on out where to follow the run.
func (w *waiter) wait(ctx context.Context, kind string, run client.WorkflowRun, read func(context.Context) (progress, error), result any) error {
	done := make(chan error, 1)
	go func() { done <- run.Get(ctx, result) }()
	ticks, stop := w.ticks()
	defer stop()
	view := w.view()
	for {
		select {
		case err := <-done:
			view.end()
			return w.outcome(ctx, kind, run, err)
		case <-ticks:
			if p, err := readWithin(ctx, read); err == nil {
				view.show(p)
			}
		}
	}
}

// outcome is wait's error for run.Get's err; see wait.
func (w *waiter) outcome(ctx context.Context, kind string, run client.WorkflowRun, err error) error {
	if err == nil {
		return nil
	}
	id, runID := run.GetID(), run.GetRunID()
	var ended *temporal.WorkflowExecutionError
	if errors.As(err, &ended) {
		fmt.Fprintf(w.out, "%s %s (run %s) did not complete; its history:\n", kind, id, runID)
		w.where.writeFollow(w.out, id, runID)
		return &runFailedError{kind: kind, id: id, outcome: jobs.Outcome(err), err: err}
	}
	why := fmt.Errorf("read the result: %w", err)
	if ctx.Err() != nil {
		why = context.Cause(ctx)
	}
	fmt.Fprintf(w.out, "%s %s (run %s) keeps running; follow it with:\n", kind, id, runID)
	w.where.writeFollow(w.out, id, runID)
	fmt.Fprintf(w.out, "  to cancel it  %s\n", w.where.command("cancel", id, runID))
	return &stoppedWaitingError{kind: kind, id: id, err: why}
}

// runFailedError is wait's error for a run that ended without completing:
// it failed, was canceled or terminated, or timed out.
type runFailedError struct {
	kind, id string
	outcome  string // from jobs.Outcome
	err      error  // the SDK's *WorkflowExecutionError
}

func (e *runFailedError) Error() string { return e.kind + " " + e.id + " " + e.outcome }

func (e *runFailedError) Unwrap() error { return e.err }

// stoppedWaitingError is wait's error when it stops waiting for a run that
// goes on.
type stoppedWaitingError struct {
	kind, id string
	err      error // why: the context's cause, or the error reading the result
}

func (e *stoppedWaitingError) Error() string {
	return fmt.Sprintf("stopped waiting for %s %s (%s); the run goes on", e.kind, e.id, stopReason(e.err))
}

func (e *stoppedWaitingError) Unwrap() error { return e.err }

// stopReason says why a wait stopped: a context's deadline or cancel, or
// any other cause as it is (signal.NotifyContext's is "interrupt signal
// received" after Ctrl-C).
func stopReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the wait timed out"
	case errors.Is(err, context.Canceled):
		return "the wait was canceled"
	}
	return err.Error()
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
	width int // runes of the line drawn last: a shorter one is padded over it
}

func (v *barView) show(p progress) {
	line := p.barLine()
	n := utf8.RuneCountInString(line)
	if n < v.width {
		line += strings.Repeat(" ", v.width-n)
	}
	fmt.Fprintf(v.w, "\r%s", line)
	v.drawn, v.width = true, n
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
