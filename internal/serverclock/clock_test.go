package serverclock

import (
	"testing"
	"time"
)

func TestServerClock(t *testing.T) {
	t.Parallel()
	var c Clock
	t0 := time.Now()
	if _, ok := c.Now(t0, time.Minute); ok {
		t.Fatal("empty clock answered")
	}
	c.Observe("not a date", t0)
	if _, ok := c.Now(t0, time.Minute); ok {
		t.Fatal("a bad Date header was used")
	}
	c.Observe("Sat, 03 Feb 2001 04:05:06 GMT", t0)
	base := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if got, ok := c.Now(t0.Add(30*time.Second), time.Minute); !ok || !got.Equal(base.Add(30*time.Second)) {
		t.Fatalf("now after 30s = %v, %v; want %v", got, ok, base.Add(30*time.Second))
	}
	if _, ok := c.Now(t0.Add(61*time.Second), time.Minute); ok {
		t.Fatal("a Date older than maxAge was used")
	}
	// An older observation (a slow response arriving late) does not win.
	c.Observe("Sat, 03 Feb 2001 04:00:00 GMT", t0.Add(-time.Second))
	if got, _ := c.Now(t0, time.Minute); !got.Equal(base) {
		t.Fatalf("older observation replaced the newer: %v", got)
	}
}
