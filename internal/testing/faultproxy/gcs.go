package faultproxy

import (
	"net/http"
	"net/url"
	"strings"
)

// gcsRequest presents a request of the GCS JSON API (fake-gcs-server, or
// GCS behind a proxy) the way rules see an S3 request, so that one rule
// serves both: an upload (POST /upload/storage/v1/b/B/o?name=K) is a PUT
// of B/K, a chunk of a resumable upload (PUT ...?upload_id=) a part, a
// rewrite a PUT of its destination with x-amz-copy-source, objects.get a
// GET of B/K, objects.list a GET of B, objects.delete a DELETE of B/K.
// Anything else (the XML API's GET /B/K) is left as it is.
func gcsRequest(r *http.Request) (Request, bool) {
	p := r.URL.Path
	q := r.URL.Query()
	req := Request{Method: r.Method, Query: q, Header: r.Header}
	if rest, ok := strings.CutPrefix(p, "/upload/storage/v1/b/"); ok {
		bucket, _, _ := strings.Cut(rest, "/")
		req.Method = http.MethodPut
		if name := q.Get("name"); name != "" && r.Method == http.MethodPost {
			req.Path = bucket + "/" + name
			return req, true
		}
		// A chunk of a resumable upload: a part (its object is named by
		// the upload session only).
		req.Path = bucket
		q2 := url.Values{}
		for k, v := range q {
			q2[k] = v
		}
		q2.Set("partNumber", "1")
		req.Query = q2
		return req, true
	}
	rest, ok := strings.CutPrefix(p, "/storage/v1/b/")
	if !ok {
		return Request{}, false
	}
	bucket, obj, hasObj := strings.Cut(rest, "/o")
	if !hasObj || obj == "" {
		req.Path = bucket // objects.list, or a bucket request
		return req, true
	}
	key := strings.TrimPrefix(obj, "/")
	if src, dst, ok := strings.Cut(key, "/rewriteTo/b/"); ok {
		db, dk, _ := strings.Cut(dst, "/o/")
		h := r.Header.Clone()
		h.Set("X-Amz-Copy-Source", bucket+"/"+src)
		req.Method, req.Path, req.Header = http.MethodPut, db+"/"+dk, h
		return req, true
	}
	req.Path = bucket + "/" + key
	return req, true
}
