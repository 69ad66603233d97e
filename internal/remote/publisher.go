package remote

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"strings"
)

// PublisherLink is the name of the pointer, under the source's prefix,
// that names the worker which published the source's latest snapshot: its
// host and the recreate token of the Temporal session it ran in. A refresh
// asks for that worker first: it holds the current snapshot and the table
// files' key maps warm, while another worker would first download the
// snapshot or fold from an older one of its own.
const PublisherLink = "publisher"

// Publisher is the worker that published a source's latest snapshot.
type Publisher struct {
	Host  string
	Token []byte // the session's recreate token (workflow.SessionInfo)
}

// PublisherName is the store name of the publisher pointer.
func (m *Mirror) PublisherName() string { return path.Join(m.Source, PublisherLink) }

// encodePublisher is the pointer value of p: the host, a tab, the token in
// base64.
func encodePublisher(p Publisher) (string, error) {
	if strings.ContainsAny(p.Host, "\t\x00") {
		return "", fmt.Errorf("publisher host %q holds a tab or NUL", p.Host)
	}
	return p.Host + "\t" + base64.StdEncoding.EncodeToString(p.Token), nil
}

func decodePublisher(v string) (Publisher, error) {
	host, tok, ok := strings.Cut(v, "\t")
	if !ok {
		return Publisher{}, fmt.Errorf("publisher pointer %q: want host, tab, token", v)
	}
	b, err := base64.StdEncoding.DecodeString(tok)
	if err != nil {
		return Publisher{}, fmt.Errorf("publisher pointer: token: %w", err)
	}
	return Publisher{Host: host, Token: b}, nil
}

// Publisher returns the recorded publisher of the source; ok is false when
// none is recorded.
func (m *Mirror) Publisher(ctx context.Context) (p Publisher, ok bool, err error) {
	v, err := m.readPointer(ctx, m.PublisherName())
	if err != nil {
		return Publisher{}, false, err // the store names the pointer
	}
	if v == "" {
		return Publisher{}, false, nil
	}
	p, err = decodePublisher(v)
	return p, err == nil, err
}

// SetPublisher records p as the source's publisher, replacing the one
// recorded (a refresh of one source runs at a time, so the read and the
// swap do not race another writer; if they do, the last one wins).
func (m *Mirror) SetPublisher(ctx context.Context, p Publisher) error {
	next, err := encodePublisher(p)
	if err != nil {
		return err
	}
	old, err := m.readPointer(ctx, m.PublisherName())
	if err != nil {
		return fmt.Errorf("record the publisher of %s: %w", m.Source, err)
	}
	if old == next {
		return nil
	}
	if err := m.Store.SwapPointer(ctx, m.PublisherName(), old, next); err != nil {
		return fmt.Errorf("record the publisher of %s: %w", m.Source, err)
	}
	return nil
}
