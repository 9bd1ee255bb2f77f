// Command workqueue-bench runs add/get/done cycles on client-go's rate-limiting
// work queue, the same cycles bench/workqueue/run.js runs on @tessera/workqueue,
// and prints one JSON line per measurement.
//
// A cycle is Add(key), Get(), Done(item); W goroutines share one counter of
// cycles and keys are taken round-robin from a fixed set of distinct keys.
// The first worker to find the counter exhausted shuts the queue down.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/util/workqueue"
)

type result struct {
	Impl         string  `json:"impl"`
	Workers      int     `json:"workers"`
	Keys         int     `json:"keys"`
	Ops          int     `json:"ops"`
	Runs         int     `json:"runs"`
	MedianSecs   float64 `json:"medianSeconds"`
	CyclesPerSec float64 `json:"cyclesPerSecond"`
	// Cycles per second of CPU time (user+system, all threads): less sensitive
	// to other load on a shared machine than the wall-clock rate.
	CyclesPerCPUSec float64 `json:"cyclesPerCpuSecond"`
	GoMaxProcs      int     `json:"gomaxprocs"`
	GoVersion       string  `json:"goVersion"`
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cycles returns the wall-clock and CPU time of one run.
func cycles(keys []string, ops, workers int) (time.Duration, time.Duration) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{},
	)
	defer q.ShutDown()
	var next atomic.Int64
	var wg sync.WaitGroup
	start, startCPU := time.Now(), cpuTime()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= ops {
					// Release workers still waiting in Get: on 2 cores a goroutine can be
					// preempted while it holds a key, long enough for the key to come round
					// again and be deduplicated, which leaves one Get without an item.
					q.ShutDown()
					return
				}
				q.Add(keys[i%len(keys)])
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(item)
			}
		}()
	}
	wg.Wait()
	return time.Since(start), cpuTime() - startCPU
}

func main() {
	nKeys := flag.Int("keys", 10000, "distinct keys")
	ops := flag.Int("ops", 1000000, "add/get/done cycles per run")
	workerList := flag.String("workers", "1,8", "comma-separated worker counts")
	runs := flag.Int("runs", 5, "runs per worker count (the median is reported)")
	flag.Parse()

	keys := make([]string, *nKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/object-%d", i)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, field := range strings.Split(*workerList, ",") {
		workers, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || workers < 1 {
			fmt.Fprintf(os.Stderr, "bad worker count %q\n", field)
			os.Exit(2)
		}
		cycles(keys, *ops/10, workers) // warm-up
		times := make([]float64, *runs)
		cpus := make([]float64, *runs)
		for r := range times {
			runtime.GC()
			wall, cpu := cycles(keys, *ops, workers)
			times[r], cpus[r] = wall.Seconds(), cpu.Seconds()
		}
		sort.Float64s(times)
		sort.Float64s(cpus)
		median := times[len(times)/2]
		_ = enc.Encode(result{
			Impl: "client-go", Workers: workers, Keys: *nKeys, Ops: *ops, Runs: *runs,
			MedianSecs: median, CyclesPerSec: float64(*ops) / median,
			CyclesPerCPUSec: float64(*ops) / cpus[len(cpus)/2],
			GoMaxProcs:      runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		})
	}
}
