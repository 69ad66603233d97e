package sqlport

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// killStmt is KILL [QUERY | CONNECTION] id; connectionID is SELECT
// CONNECTION_ID(), how a client learns the id another connection kills.
var (
	killStmt     = regexp.MustCompile(`(?is)^\s*KILL\s+(QUERY\s+|CONNECTION\s+)?(\d+)\s*;?\s*$`)
	connectionID = regexp.MustCompile(`(?is)^\s*SELECT\s+CONNECTION_ID\s*\(\s*\)\s*;?\s*$`)
)

// errKilled is the cause of a statement another connection killed.
var errKilled = errors.New("killed")

// conns are the port's open connections, by connection id: KILL finds the
// statement to cancel here.
type conns struct {
	mu sync.Mutex
	m  map[uint32]*handler
}

func (c *conns) add(id uint32, h *handler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[uint32]*handler{}
	}
	c.m[id] = h
}

func (c *conns) remove(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// running is a handler's statement in progress: KILL cancels it.
type running struct {
	mu     sync.Mutex
	cancel context.CancelCauseFunc // nil between statements
}

// start makes the context of a statement KILL QUERY can cancel; done ends
// it.
func (r *running) start(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
		cancel(nil)
	}
}

// kill cancels the statement in progress, if any.
func (r *running) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel(errKilled)
	}
}

// kill answers KILL [QUERY | CONNECTION] id from h: the statement running
// on connection id is cancelled (it ends with error 1317), and with KILL
// [CONNECTION] the connection is closed. Only the user's own connections
// may be killed (error 1095), as in MySQL for a user without the
// CONNECTION_ADMIN privilege; an unknown id is error 1094.
func (h *handler) kill(m []string) error {
	id, err := strconv.ParseUint(m[2], 10, 32)
	if err != nil {
		return errRefused(mysql.ER_NO_SUCH_THREAD, "Unknown thread id: %s", m[2])
	}
	h.conns.mu.Lock()
	target := h.conns.m[uint32(id)]
	h.conns.mu.Unlock()
	switch {
	case target == nil:
		return errRefused(mysql.ER_NO_SUCH_THREAD, "Unknown thread id: %d", id)
	case target.user != h.user:
		return errRefused(mysql.ER_KILL_DENIED_ERROR, "You are not owner of thread %d", id)
	}
	target.inflight.kill()
	if len(m[1]) == 0 || m[1][0] == 'C' || m[1][0] == 'c' {
		target.closeConn()
	}
	return nil
}

// interruptedError is the MySQL error of a statement whose context ended:
// killed (KILL QUERY) or past its time limit, both error 1317 as in MySQL.
func (h *handler) interruptedError(ctx context.Context) *mysql.MyError {
	if errors.Is(context.Cause(ctx), errKilled) {
		return errRefused(mysql.ER_QUERY_INTERRUPTED, "Query execution was interrupted: killed by KILL QUERY from another connection")
	}
	return errRefused(mysql.ER_QUERY_INTERRUPTED, "Query execution was interrupted: the statement ran past its time limit of %s", h.cfg.Timeout)
}

// connectionIDResult answers SELECT CONNECTION_ID().
func (h *handler) connectionIDResult() (*mysql.Result, error) {
	rs, err := mysql.BuildSimpleTextResultset([]string{"CONNECTION_ID()"}, [][]any{{int64(h.id)}})
	if err != nil {
		return nil, fmt.Errorf("connection id: %w", err)
	}
	return mysql.NewResult(rs), nil
}
