// The client-go and controller-runtime contenders of bench/peers (cold-sync.js,
// churn.js, fan-out.js): one program that caches one core/v1 collection the
// way each framework's docs recommend, and speaks "the informer protocol" of
// bench/peers/README.md: configured by BENCH_* environment variables, JSON
// lines on stdout, anything for a human on stderr.
//
//	{"ev":"synced","objects":N,"resourceVersion":"R","ms":T,"cpuMs":C,"peakRssMiB":P,"baselineRssMiB":B,"rssMiB":S,"heapMiB":H}
//	{"ev":"e","n":"<name>","rv":"<resourceVersion>","t":<µs of CLOCK_MONOTONIC>}   (BENCH_EVENTS=1, after synced)
//
// BENCH_IMPL picks the framework:
//
//	client-go (default)  a SharedInformerFactory informer (informers.go)
//	controller-runtime   a controller-runtime cache informer (informers.go)
//
// The harness builds it with `GOFLAGS=-mod=mod go build` (lib/contenders.js),
// runs it once per measurement with KUBECONFIG pointing at the test control
// plane, reads the synced line, and with BENCH_EVENTS=1 stops it by SIGTERM.
// On stderr it says whether the WatchListClient feature gate is on and, once
// per kind of request, what went over the wire (wire.go). An option the
// framework cannot honour exits 3 with the reason as the last stderr line.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/features"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var out = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func emit(v any) {
	out.Lock()
	defer out.Unlock()
	_ = out.enc.Encode(v)
}

// synced is the protocol's synced line; field order is the protocol's.
type synced struct {
	Ev              string  `json:"ev"`
	Objects         int     `json:"objects"`
	ResourceVersion string  `json:"resourceVersion"`
	Ms              int64   `json:"ms"`
	CPUMs           int64   `json:"cpuMs"`
	PeakRssMiB      float64 `json:"peakRssMiB"`
	BaselineRssMiB  float64 `json:"baselineRssMiB"`
	RssMiB          float64 `json:"rssMiB"`
	HeapMiB         float64 `json:"heapMiB"`
}

// event is one add or update handed to the handler after synced.
type event struct {
	Ev string `json:"ev"`
	N  string `json:"n"`
	RV string `json:"rv"`
	T  int64  `json:"t"`
}

func monotonicMicros() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Sec*1_000_000 + ts.Nsec/1_000
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func unsupported(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "not supported: "+format+"\n", args...)
	os.Exit(3)
}

// options is the BENCH_* environment.
type options struct {
	impl, resource, namespace  string // namespace "" is all namespaces
	labelSelector, shardSelect string
	stripManagedFields, events bool
}

func main() {
	// client-go reads its feature gates from KUBE_FEATURE_<name> once, on first
	// use: set the one for watch-list before anything asks for it.
	switch v := os.Getenv("BENCH_WATCH_LIST"); v {
	case "1":
		os.Setenv("KUBE_FEATURE_WatchListClient", "true")
	case "0":
		os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	case "":
	default:
		unsupported("BENCH_WATCH_LIST %q: 0 or 1", v)
	}
	fmt.Fprintf(os.Stderr, "client-go feature gate WatchListClient enabled: %v\n",
		features.FeatureGates().Enabled(features.WatchListClient))

	o := options{
		impl:               os.Getenv("BENCH_IMPL"),
		resource:           os.Getenv("BENCH_RESOURCE"),
		namespace:          os.Getenv("BENCH_NAMESPACE"),
		labelSelector:      os.Getenv("BENCH_LABEL_SELECTOR"),
		shardSelect:        os.Getenv("BENCH_SHARD_SELECTOR"),
		stripManagedFields: os.Getenv("BENCH_STRIP_MANAGED_FIELDS") == "1",
		events:             os.Getenv("BENCH_EVENTS") == "1",
	}
	if o.impl == "" {
		o.impl = "client-go"
	}
	if o.resource == "" {
		o.resource = "configmaps"
	}
	if o.resource != "configmaps" && o.resource != "pods" {
		unsupported("BENCH_RESOURCE %q: configmaps or pods", o.resource)
	}
	if o.namespace == "*" {
		o.namespace = ""
	}
	build, ok := impls[o.impl]
	if !ok {
		unsupported("unknown BENCH_IMPL %q: client-go or controller-runtime", o.impl)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail(err)
	}
	setWire(cfg, os.Getenv("BENCH_WIRE"))
	logRequests(cfg)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// Handler calls before synced print nothing.
	var live atomic.Bool
	onEvent := func(obj any) {
		if !live.Load() {
			return
		}
		t := monotonicMicros()
		if m, err := meta.Accessor(obj); err == nil {
			emit(event{Ev: "e", N: m.GetName(), RV: m.GetResourceVersion(), T: t})
		}
	}

	// The informers retry a failed list or watch forever; against the test
	// control plane a failure before synced is an error in the setup (a bad
	// selector, say), so it ends the run instead of wedging it.
	onWatchError := func(ctx context.Context, r *toolscache.Reflector, err error) {
		if !live.Load() && ctx.Err() == nil {
			fail(fmt.Errorf("initial sync: %w", err))
		}
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	}

	baselineRss := procStatusMiB("VmRSS")
	cpu0 := cpuTime()
	t0 := time.Now()
	informer, err := build(ctx, cfg, o, hooks{onEvent, onWatchError})
	if err != nil {
		fail(err)
	}
	// Poll the framework's own flag every 2 ms (WaitForCacheSync polls every
	// 100 ms, which would round every contender's time up to it).
	tick := time.NewTicker(2 * time.Millisecond)
	for !informer.HasSynced() {
		select {
		case <-ctx.Done():
			os.Exit(0)
		case <-tick.C:
		}
	}
	tick.Stop()
	elapsed := time.Since(t0)
	cpu := cpuTime() - cpu0
	line := synced{
		Ev:             "synced",
		Ms:             roundMs(elapsed),
		CPUMs:          roundMs(cpu),
		PeakRssMiB:     procStatusMiB("VmHWM"),
		BaselineRssMiB: baselineRss,
		RssMiB:         procStatusMiB("VmRSS"),
	}
	items, err := informer.List(ctx)
	if err != nil {
		fail(err)
	}
	line.Objects = len(items)
	line.ResourceVersion = highestResourceVersion(items)
	runtime.GC() // after the timing: the live heap, not garbage the sync left behind
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	line.HeapMiB = roundMiB(float64(mem.HeapAlloc))
	live.Store(true)
	emit(line)
	if !o.events {
		os.Exit(0)
	}
	<-ctx.Done()
	os.Exit(0)
}

// highestResourceVersion is the highest metadata.resourceVersion among the
// cached objects, as a decimal string ("" when there are none).
func highestResourceVersion(items []any) string {
	var highest uint64
	found := false
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			continue
		}
		rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
		if err != nil {
			continue
		}
		if !found || rv > highest {
			highest, found = rv, true
		}
	}
	if !found {
		return ""
	}
	return strconv.FormatUint(highest, 10)
}

// procStatusMiB reads a memory line of /proc/self/status (VmRSS, VmHWM) in
// MiB, rounded to 0.1.
func procStatusMiB(field string) float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fail(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				fail(fmt.Errorf("/proc/self/status %s: %w", field, err))
			}
			return roundMiB(float64(kib) * 1024)
		}
	}
	fail(fmt.Errorf("/proc/self/status has no %s", field))
	return 0
}

func roundMs(d time.Duration) int64 { return int64(math.Round(float64(d) / float64(time.Millisecond))) }

func roundMiB(bytes float64) float64 {
	return math.Round(bytes/(1<<20)*10) / 10
}

// cpuTime is this process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		fail(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
