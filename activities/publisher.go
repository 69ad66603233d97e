package activities

import (
	"context"

	"github.com/dbtrail/dbtrail/internal/remote"
)

// PublisherInput names a source.
type PublisherInput struct {
	Source string
}

// PublisherResult is the worker that published the source's latest
// snapshot: its host and the recreate token of the session it ran in; both
// empty when none is recorded or the worker has no remote store.
type PublisherResult struct {
	Host  string `json:",omitempty"`
	Token []byte `json:",omitempty"`
}

// RecordPublisherInput is the worker that just published a snapshot of
// Source.
type RecordPublisherInput struct {
	Source string
	Host   string
	Token  []byte
}

// LastPublisher reads which worker published the source's latest snapshot
// (remote.Mirror.Publisher), so that the next refresh asks for it first.
// Without a remote store there is nothing to read: workers that share no
// store share no snapshots either.
func (a *Activities) LastPublisher(ctx context.Context, in PublisherInput) (PublisherResult, error) {
	if a.Remote == nil {
		return PublisherResult{}, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return PublisherResult{}, err
	}
	p, ok, err := m.Publisher(ctx)
	if err != nil || !ok {
		return PublisherResult{}, transferErr(err)
	}
	return PublisherResult{Host: p.Host, Token: p.Token}, nil
}

// RecordPublisher records the worker that published the source's latest
// snapshot on the remote store (a no-op without one). Recording the same
// worker again changes nothing.
func (a *Activities) RecordPublisher(ctx context.Context, in RecordPublisherInput) (struct{}, error) {
	if a.Remote == nil || len(in.Token) == 0 {
		return struct{}{}, nil
	}
	m, err := a.mirror(ctx, in.Source)
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, transferErr(m.SetPublisher(ctx, remote.Publisher{Host: in.Host, Token: in.Token}))
}
