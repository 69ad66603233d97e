package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// backupTimeout bounds the demo's wait for its full backup: the workflow
// retries failing activities, so a backup that cannot succeed would
// otherwise keep `dbtrail backup full` waiting for ever.
const backupTimeout = 10 * time.Minute

// backupResult is how the demo's full backup went.
type backupResult struct {
	summary  string        // what backup full printed on stdout: the snapshot published
	took     time.Duration // backup full's run time
	err      error         // backup full failed, timed out or was interrupted
	query    string        // what the example `dbtrail query` printed (only run after a backup)
	queryErr error         // the example `dbtrail query` failed
	// restore is what the example `dbtrail restore` printed; restoreErr
	// its failure (both only after a backup).
	restore    string
	restoreErr error
	// apiCommands are the example curl commands, apiAnswers what each
	// answered (the last: the job's end) and apiErr their failure.
	apiCommands, apiAnswers []string
	apiErr                  error
}

// alreadyRunning is in what `dbtrail backup full` says when the source's
// FullBackup workflow is still open, e.g. one that an interrupted demo left
// and that the restarted worker is finishing.
const alreadyRunning = "is already running"

// retryWait is how long the demo waits before it starts backup full again
// after alreadyRunning.
const retryWait = 5 * time.Second

// takeBackup runs `dbtrail backup full` against dev's Temporal frontend and
// waits for it, forwarding its output and progress, then the example
// `dbtrail query` the block shows (the worker has written views.sql).
// When a FullBackup of the source is already running it waits for that one
// to end and starts its own. ctx's end stops the waiting (SIGTERM), not the
// workflow.
func (w *watcher) takeBackup(ctx context.Context) backupResult {
	var r backupResult
	args := []string{"backup", "full", "--temporal-addr", w.cfg.frontendAddr, "--source", sourceName}
	say("taking a full backup: %s %s", display(w.bin), strings.Join(args, " "))
	start := time.Now()
	timeout := time.NewTimer(backupTimeout)
	defer timeout.Stop()
	var stdout bytes.Buffer
	for told := false; ; {
		// Written by the child's copying goroutines only, read after done.
		var all safeBuffer
		stdout.Reset()
		c, err := startChildWith(w.bin, w.env, childOptions{progress: true, stdout: io.MultiWriter(&stdout, &all), stderr: &all}, args...)
		if err != nil {
			r.err = err
			return r
		}
		select {
		case <-c.done:
			if c.err != nil && strings.Contains(all.String(), alreadyRunning) {
				if !told {
					told = true
					say("a FullBackup of %s from an earlier run is still running (the worker of dbtrail dev resumes it); waiting for it to end, then starting this one", sourceName)
				}
				select {
				case <-time.After(retryWait):
					continue
				case <-ctx.Done():
					r.err = fmt.Errorf("interrupted while waiting for the FullBackup of an earlier run to end")
				case <-timeout.C:
					r.err = fmt.Errorf("the FullBackup of an earlier run was still running after %s; see the Temporal UI", backupTimeout)
				}
			} else if c.err != nil {
				r.err = fmt.Errorf("%s failed (%v); its output is above, prefixed [%s]", c.name, c.err, c.name)
			}
		case <-ctx.Done():
			_ = c.stop(10 * time.Second)
			r.err = fmt.Errorf("stopped waiting for %s; the FullBackup workflow it started stays in Temporal's history and goes on when dbtrail dev runs again", c.name)
		case <-timeout.C:
			_ = c.stop(10 * time.Second)
			r.err = fmt.Errorf("%s did not finish within %s; the FullBackup workflow may still be running: see the Temporal UI", c.name, backupTimeout)
		}
		break
	}
	r.took = time.Since(start)
	r.summary = strings.TrimSpace(stdout.String())
	if r.err != nil {
		say("full backup: %v", r.err)
		return r
	}
	say("full backup done in %s", r.took.Round(100*time.Millisecond))

	say("querying the snapshot: %s", w.queryCommand())
	r.query, r.queryErr = output(ctx, w.bin, w.env, w.queryArgs()...)
	if r.queryErr != nil {
		say("dbtrail query: %v", r.queryErr)
	}
	say("restoring the snapshot's moment into a scratch schema: %s", w.restoreCommand())
	r.restore, r.restoreErr = w.restoreExample(ctx)
	if r.restoreErr != nil {
		say("dbtrail restore: %v", r.restoreErr)
	}
	say("starting a verify through the HTTP API on %s", w.cfg.apiAddr)
	r.apiCommands, r.apiAnswers, r.apiErr = w.apiExample(ctx)
	if r.apiErr != nil {
		say("API example: %v", r.apiErr)
	}
	return r
}

// demoQuery is the example query of the snapshot: the DECIMAL sum is exact
// in the typed views.
const demoQuery = "SELECT status, count(*) AS orders, sum(total) AS total FROM shop.orders GROUP BY status ORDER BY status"

// queryArgs are the arguments of the example `dbtrail query`.
func (w *watcher) queryArgs() []string {
	return []string{"query", "--backup-dir", w.backupDir, "--source", sourceName, demoQuery}
}

// queryCommand is the example `dbtrail query` as the user types it.
func (w *watcher) queryCommand() string {
	return fmt.Sprintf("%s query --backup-dir %s %q", display(w.bin), display(w.backupDir), demoQuery)
}

// safeBuffer is a bytes.Buffer that two goroutines may write.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
