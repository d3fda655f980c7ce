// Package serverclock keeps an object store server's time from the Date
// headers of its responses: the most recent one, extrapolated with the local
// monotonic clock. The store drivers (s3store, gcsstore, azstore) feed it
// from their transports and answer store.Store's Now with it, so the ages
// that gc and the grace period compute follow the server, not the local
// clock. The Date header has one-second resolution and is truncated, so the
// time it gives may be behind the server by up to a second, never ahead.
package serverclock
