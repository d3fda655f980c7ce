package bench

import (
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// CountingClient is an HTTP client for the AWS SDK that counts every
// request it sends (SDK retries included), by S3 operation. Requests are
// counted on the wire, so that a store's hidden requests (a clock probe,
// a retried part) show up too.
type CountingClient struct {
	c *awshttp.BuildableClient

	mu     sync.Mutex
	counts map[string]int
}

// NewCountingClient returns a client with the SDK's default transport,
// allowing up to maxConns idle connections to the server, so that many
// concurrent writers reuse connections.
func NewCountingClient(maxConns int) *CountingClient {
	c := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = max(maxConns, t.MaxIdleConns)
		t.MaxIdleConnsPerHost = max(maxConns, t.MaxIdleConnsPerHost)
	})
	return &CountingClient{c: c, counts: map[string]int{}}
}

func (c *CountingClient) count(r *http.Request) {
	op := Operation(r.Method, r.URL.Path, r.URL.Query())
	c.mu.Lock()
	c.counts[op]++
	c.mu.Unlock()
}

// Do sends the request and counts it.
func (c *CountingClient) Do(r *http.Request) (*http.Response, error) {
	c.count(r)
	return c.c.Do(r)
}

// Counts returns a copy of the counts by operation.
func (c *CountingClient) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Total returns the number of requests sent so far.
func (c *CountingClient) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Operation names the S3 operation of a request from its method, its
// path (path-style addressing: /bucket/key) and its query.
func Operation(method, path string, q url.Values) string {
	bucketOnly := strings.Count(strings.Trim(path, "/"), "/") == 0
	switch method {
	case http.MethodPut:
		if q.Has("partNumber") && q.Has("uploadId") {
			return "UploadPart"
		}
		if q.Has("tagging") || q.Has("acl") {
			return "PUT?sub"
		}
		return "PutObject"
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			return "CreateMultipartUpload"
		case q.Has("uploadId"):
			return "CompleteMultipartUpload"
		case q.Has("delete"):
			return "DeleteObjects"
		}
		return "POST"
	case http.MethodGet:
		switch {
		case q.Has("uploads"):
			return "ListMultipartUploads"
		case q.Has("list-type"), q.Has("prefix"), q.Has("delimiter"):
			return "ListObjects"
		}
		return "GetObject"
	case http.MethodHead:
		if bucketOnly {
			return "HeadBucket"
		}
		return "HeadObject"
	case http.MethodDelete:
		if q.Has("uploadId") {
			return "AbortMultipartUpload"
		}
		return "DeleteObject"
	}
	return method
}

// Diff returns after - before, dropping zero entries.
func Diff(after, before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
