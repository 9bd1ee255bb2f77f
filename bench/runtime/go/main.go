// The controller-runtime contender of bench/runtime (startup.js and
// throughput.js): a manager with one no-op ConfigMap controller, speaking
// the line protocol of tessera-replica.js on stdout:
//
//	{"ev":"ready"}                   once the cache has synced
//	{"ev":"r","n":<name>,"t":<µs>}   the first reconcile of each ConfigMap in $BENCH_NAMESPACE
//	                                 (µs of CLOCK_MONOTONIC, comparable across processes)
//	{"ev":"count","total":<n>}       reconciles so far, every 500 ms
//
// Configuration as controller-runtime finds it (KUBECONFIG, in-cluster);
// metrics and probe servers and leader election off. Only BENCH_MODE
// "every-replica": controller-runtime has no sharding.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var out = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func emit(v map[string]any) {
	out.Lock()
	defer out.Unlock()
	_ = out.enc.Encode(v)
}

func monotonicMicros() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Sec*1_000_000 + ts.Nsec/1_000
}

func main() {
	if mode := os.Getenv("BENCH_MODE"); mode != "" && mode != "every-replica" {
		fmt.Fprintf(os.Stderr, "controller-runtime has no %q mode\n", mode)
		os.Exit(3)
	}
	namespace := os.Getenv("BENCH_NAMESPACE")
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var total atomic.Int64
	var seen sync.Map
	err = ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 16}).
		Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			total.Add(1)
			if req.Namespace == namespace {
				if _, loaded := seen.LoadOrStore(req.Name, true); !loaded {
					emit(map[string]any{"ev": "r", "n": req.Name, "t": monotonicMicros()})
				}
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	go func() {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			emit(map[string]any{"ev": "ready"})
		}
	}()
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				emit(map[string]any{"ev": "count", "total": total.Load()})
			}
		}
	}()
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
