package activities

import (
	"context"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/remote"
)

// LastPublisher reads which worker published the source's latest snapshot
// (remote.Mirror.Publisher), so that the next refresh asks for it first.
// Without a remote store there is nothing to read: workers that share no
// store share no snapshots either.
func (a *Activities) LastPublisher(ctx context.Context, in calls.PublisherInput) (calls.PublisherResult, error) {
	if a.Remote == nil {
		return calls.PublisherResult{}, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return calls.PublisherResult{}, err
	}
	p, ok, err := m.Publisher(ctx)
	if err != nil || !ok {
		return calls.PublisherResult{}, transferErr(err)
	}
	return calls.PublisherResult{Host: p.Host, Token: p.Token}, nil
}

// RecordPublisher records the worker that published the source's latest
// snapshot on the remote store (a no-op without one). Recording the same
// worker again changes nothing.
func (a *Activities) RecordPublisher(ctx context.Context, in calls.RecordPublisherInput) (struct{}, error) {
	if a.Remote == nil || len(in.Token) == 0 {
		return struct{}{}, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, transferErr(m.SetPublisher(ctx, remote.Publisher{Host: in.Host, Token: in.Token}))
}
