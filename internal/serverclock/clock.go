package serverclock

import (
	"net/http"
	"sync"
	"time"
)

// MaxAge is how long a server Date stays a good base for Now before a
// driver makes a fresh request to get another.
const MaxAge = time.Minute

// Clock remembers the Date header of the most recent response and the local
// monotonic time it arrived at. The zero value is an empty clock.
type Clock struct {
	mu     sync.Mutex
	date   time.Time // server time, 1 s resolution (truncated: never ahead)
	seenAt time.Time // local time with a monotonic reading
}

// Observe records a Date header value received at local time at. An empty
// or malformed value, or one older than the last observation (a slow
// response arriving late), changes nothing.
func (c *Clock) Observe(date string, at time.Time) {
	if date == "" {
		return
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seenAt.IsZero() || !at.Before(c.seenAt) {
		c.date, c.seenAt = t.UTC(), at
	}
}

// Now returns the server time extrapolated with the local monotonic clock,
// and false when no Date newer than maxAge is known.
func (c *Clock) Now(local time.Time, maxAge time.Duration) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seenAt.IsZero() {
		return time.Time{}, false
	}
	elapsed := local.Sub(c.seenAt)
	if elapsed < 0 || elapsed > maxAge {
		return time.Time{}, false
	}
	return c.date.Add(elapsed), true
}
