package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/payload"
)

// The steps of a backup hand each other local paths (the dump folder, the
// staging folder, the previous snapshot): they run in a Temporal session,
// on one worker, so that any number of workers on any number of machines
// can serve the task queue. Only the object store (--archive-url) is shared
// between machines.

// hostSessionChange is the change id (workflow.GetVersion) of the
// sessions: histories recorded before it replay with every activity on the
// task queue, as they ran.
const hostSessionChange = "host-sessions"

// MaxSessionAttempts bounds the sessions a run opens for its on-host steps:
// when a session's worker dies (its session heartbeat stops), the steps run
// again from the start in a new session on another live worker; after
// MaxSessionAttempts lost sessions the run fails with
// payload.ErrSessionsExhausted.
const MaxSessionAttempts = 3

// SessionHeartbeatTimeout is how long a session's worker may stay silent
// before the session counts as lost (the worker heartbeats every third of
// it): the heartbeat timeout of the refresh's activities.
const SessionHeartbeatTimeout = 5 * calls.HeartbeatEvery

// sessionOptions are the options of a session: it may live as long as the
// longest step (a dump of 12 hours, then the conversion), and waits up to
// wait for a worker to take it.
func sessionOptions(wait time.Duration) *workflow.SessionOptions {
	return &workflow.SessionOptions{
		ExecutionTimeout: 72 * time.Hour,
		CreationTimeout:  wait,
		HeartbeatTimeout: SessionHeartbeatTimeout,
	}
}

// newSessionWait is how long a new session waits for any worker to take
// it; preferredHostWait is how long a session on a preferred worker (the
// one that published the previous snapshot, or a compaction's) waits
// before the run falls back to any worker: a live worker takes it within a
// second, and a preferred worker that restarted or died costs this much
// once (the next run prefers the worker that ran this one).
const (
	newSessionWait    = time.Hour
	preferredHostWait = 10 * time.Second
)

// onOneHost runs steps with every activity they start on one worker (a
// session), and returns steps' error as is. When the session's worker dies
// the session fails, the steps' running activities are cancelled, and
// steps run again from the start in a new session, at most
// MaxSessionAttempts sessions in all: steps must be idempotent and must
// reset whatever they report (progress, results) when they start. prefer,
// when not nil, is the recreate token of the session whose host the first
// attempt asks for (workflow.RecreateSession). onOneHost returns the host
// and recreate token of the session that ran the steps to the end, for a
// later workflow to come back to that host. Histories from before the
// change run steps once without a session (no host).
func onOneHost(ctx workflow.Context, prefer []byte, steps func(workflow.Context) error) (sessionHost, error) {
	if workflow.GetVersion(ctx, hostSessionChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return sessionHost{}, steps(ctx)
	}
	log := workflow.GetLogger(ctx)
	var lost []string
	for attempt := 1; attempt <= MaxSessionAttempts; attempt++ {
		sctx, err := openSession(ctx, prefer, attempt)
		if err != nil {
			lost = append(lost, fmt.Sprintf("session %d: no worker took it: %v", attempt, err))
			log.Warn("no session", "attempt", attempt, "error", err)
			continue
		}
		info := workflow.GetSessionInfo(sctx)
		host := info.HostName
		err = steps(sctx)
		token := info.GetRecreateToken()
		failed := info.SessionState == workflow.SessionStateFailed
		workflow.CompleteSession(sctx)
		if err == nil || !failed {
			return sessionHost{Token: token, Host: host}, err
		}
		lost = append(lost, fmt.Sprintf("session %d: the worker on %s stopped heartbeating (%v)", attempt, host, err))
		log.Warn("session lost; running its steps again in a new session", "attempt", attempt, "host", host, "error", err)
	}
	return sessionHost{}, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("%d sessions lost their worker: %s", MaxSessionAttempts, strings.Join(lost, "; ")),
		payload.ErrSessionsExhausted, nil)
}

// sessionHost is the worker a session ran on: its host name and the
// session's recreate token (workflow.RecreateSession comes back to it).
type sessionHost struct {
	Token []byte
	Host  string
}

// openSession opens attempt's session: the first on the preferred host when
// there is one, the others on any worker.
func openSession(ctx workflow.Context, prefer []byte, attempt int) (workflow.Context, error) {
	if attempt == 1 && prefer != nil {
		return workflow.RecreateSession(ctx, prefer, sessionOptions(preferredHostWait))
	}
	return workflow.CreateSession(ctx, sessionOptions(newSessionWait))
}
