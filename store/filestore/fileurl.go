package filestore

import (
	"net/url"
	"runtime"
	"strings"
)

// onWindows selects the Windows spelling of file URLs (file:///C:/data).
var onWindows = runtime.GOOS == "windows"

// PathFromURL returns the local path of a file URL's path (url.URL.Path):
// itself on Unix; on Windows, file:///C:/data/sales has the path
// /C:/data/sales, whose local path is C:\data\sales.
func PathFromURL(urlPath string) string { return pathFromURL(urlPath, onWindows) }

// URLOfPath returns the file:// URL of an absolute local path:
// file:///data/sales, or on Windows file:///C:/data/sales for C:\data\sales.
func URLOfPath(abs string) string {
	u := url.URL{Scheme: "file", Path: urlPathOf(abs, onWindows)}
	return u.String()
}

func pathFromURL(p string, windows bool) string {
	if !windows {
		return p
	}
	if hasDrive(strings.TrimPrefix(p, "/")) {
		p = strings.TrimPrefix(p, "/")
	}
	return strings.ReplaceAll(p, "/", `\`)
}

func urlPathOf(abs string, windows bool) string {
	if !windows {
		return abs
	}
	p := strings.ReplaceAll(abs, `\`, "/")
	if hasDrive(p) {
		p = "/" + p // C:/data is /C:/data in a URL: after file:// comes an empty host
	}
	return p
}

// hasDrive reports whether p starts with a drive letter and its colon (C:).
func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}
