package main

// BENCH_WIRE, and a log on stderr of what each kind of request really used.

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// setWire applies BENCH_WIRE to the rest config both frameworks build their
// clients from. Unset leaves the config as it ships: client-go's typed
// clients then ask for protobuf (Accept: protobuf,json), controller-runtime
// sets ContentType protobuf for built-in types (Accept: protobuf, */*).
func setWire(cfg *rest.Config, wire string) {
	switch wire {
	case "":
	case "json":
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	case "protobuf":
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	default:
		unsupported("BENCH_WIRE %q: json or protobuf", wire)
	}
}

// logRequests wraps the transport to print, once per kind of request (method,
// path and the names of the query parameters), the request line, the Accept
// and Accept-Encoding headers, and the response's Content-Type and
// Content-Encoding. The wrapper sits just above Go's http.Transport, which
// adds "Accept-Encoding: gzip" itself (unless DisableCompression) and, when
// it does, removes Content-Encoding from a gzipped response after
// decompressing it and sets resp.Uncompressed instead: both are printed.
func logRequests(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &requestLog{next: rt, compression: !cfg.DisableCompression}
	})
}

type requestLog struct {
	next        http.RoundTripper
	compression bool // Go's transport asks for gzip (rest.Config.DisableCompression is false)
	seen        sync.Map
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	keys := make([]string, 0, len(req.URL.Query()))
	for k := range req.URL.Query() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kind := req.Method + " " + req.URL.Path + "?" + strings.Join(keys, "&")
	if _, loaded := l.seen.LoadOrStore(kind, true); loaded {
		return resp, nil
	}
	acceptEncoding := req.Header.Get("Accept-Encoding")
	if acceptEncoding == "" && l.compression {
		acceptEncoding = "(none set here; Go's transport adds gzip)"
	} else if acceptEncoding == "" {
		acceptEncoding = "(none; rest.Config.DisableCompression)"
	}
	fmt.Fprintf(os.Stderr, "request: %s %s | Accept: %s | Accept-Encoding: %s | %d Content-Type: %s | Content-Encoding: %q | Uncompressed (gzip undone by Go): %v\n",
		req.Method, req.URL.RequestURI(), req.Header.Get("Accept"), acceptEncoding,
		resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"), resp.Uncompressed)
	return resp, nil
}
