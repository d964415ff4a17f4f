// Rate limiting: one token bucket per MCP session (per principal for
// transports without sessions).

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
	if l == nil {
		return 0
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
		return d
	}
	return 0
}

// rateLimitText is the isError text of a limited call.
func rateLimitText(d time.Duration) string {
	ms := int64(math.Ceil(float64(d) / float64(time.Millisecond)))
	return fmt.Sprintf("rate limit exceeded: retry in %dms", ms)
}
