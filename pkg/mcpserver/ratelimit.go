// Rate limiting: one token bucket per MCP session and one per principal
// (the auth token's owner; "stdio" for the stdio transport).

package mcpserver

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxLimiters bounds the buckets kept; past it, full (idle) ones are
// forgotten, which costs their sessions nothing.
const maxLimiters = 10000

// limiters hands out a session's bucket.
type limiters struct {
	rate  rate.Limit
	burst int

	mu sync.Mutex
	by map[string]*rate.Limiter
}

func newLimiters(perSecond float64) *limiters {
	if perSecond <= 0 {
		return nil
	}
	return &limiters{
		rate:  rate.Limit(perSecond),
		burst: max(1, int(perSecond)),
		by:    map[string]*rate.Limiter{},
	}
}

// wait says how long the caller keyed key must wait before its next call
// is allowed; 0 means the call is allowed now and has been counted. A nil
// *limiters allows everything.
func (l *limiters) wait(key string, now time.Time) time.Duration {
	r, d := l.reserve(key, now)
	if d > 0 || r == nil {
		return d
	}
	return 0
}

// reserve takes a token from key's bucket: a positive duration means none
// was free and nothing was taken; otherwise the reservation (nil for a nil
// *limiters) can be handed back with CancelAt.
func (l *limiters) reserve(key string, now time.Time) (*rate.Reservation, time.Duration) {
	if l == nil {
		return nil, 0
	}
	l.mu.Lock()
	lim, ok := l.by[key]
	if !ok {
		if len(l.by) >= maxLimiters {
			for k, v := range l.by {
				if v.TokensAt(now) >= float64(l.burst) {
					delete(l.by, k)
				}
			}
		}
		lim = rate.NewLimiter(l.rate, l.burst)
		l.by[key] = lim
	}
	l.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, d
	}
	return r, 0
}

// rateLimits are the two buckets a call must pass: its session's and its
// principal's, so that opening new sessions does not buy a client more.
type rateLimits struct {
	session, principal *limiters
}

// wait counts a call against both buckets and returns 0, or returns how
// long to wait and counts it against neither.
func (r rateLimits) wait(session, principal string, now time.Time) time.Duration {
	var sr *rate.Reservation
	if session != "" { // sessionless calls have only the principal's bucket
		var d time.Duration
		if sr, d = r.session.reserve(session, now); d > 0 {
			return d
		}
	}
	if _, d := r.principal.reserve(principal, now); d > 0 {
		if sr != nil {
			sr.CancelAt(now)
		}
		return d
	}
	return 0
}

// rateLimitText is the isError text of a limited call.
func rateLimitText(d time.Duration) string {
	ms := int64(math.Ceil(float64(d) / float64(time.Millisecond)))
	return fmt.Sprintf("rate limit exceeded: retry in %dms", ms)
}
