package api

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultRate is the requests per second each token (or, without tokens,
// each remote address) may send, `--api-rate`'s default; the burst is
// twice the rate.
const DefaultRate = 20

// maxBuckets bounds the buckets kept: past it, full ones are dropped.
const maxBuckets = 10000

// limiter is a token bucket per key (a token's name, or a remote
// address): rate requests per second, burst at once.
type limiter struct {
	rate, burst float64
	now         func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// newLimiter returns the limiter of rate requests per second (burst twice
// that, at least 1), or nil for no limit (rate <= 0).
func newLimiter(rate float64, now func() time.Time) *limiter {
	if rate <= 0 {
		return nil
	}
	return &limiter{rate: rate, burst: math.Max(1, 2*rate), now: now, buckets: map[string]*bucket{}}
}

// take lets one request of key through (0) or returns how long until one
// may go.
func (l *limiter) take(key string) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// prune drops the buckets that are full again by now (the same as absent).
func (l *limiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// limit charges key (a token's name) or, when key is "", r's remote
// address; over the rate it answers 429 rate_limited with Retry-After.
func (s *server) limit(w http.ResponseWriter, r *http.Request, key string) *Error {
	if key == "" {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		key = "address " + host
	} else {
		key = "token " + key
	}
	wait := s.limiter.take(key)
	if wait == 0 {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return &Error{Status: http.StatusTooManyRequests, Code: CodeRateLimited,
		Message: fmt.Sprintf("too many requests from %s: at most %g per second (burst %g); retry after %d s", key, s.limiter.rate, s.limiter.burst, secs)}
}
