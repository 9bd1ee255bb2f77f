//! The kube-rs contenders of Tessera's benchmarks, each a binary written as
//! kube-runtime's docs recommend:
//!
//! - `informer` (src/bin/informer.rs): a `reflector` over a `watcher`,
//!   speaking "the informer protocol" of bench/peers/README.md (cold-sync.js,
//!   churn.js, fan-out.js).
//! - `controller` (src/bin/controller.rs): a no-op `Controller` for
//!   ConfigMaps, speaking the line protocol of
//!   bench/runtime/tessera-replica.js (throughput.js).
//!
//! The harness builds them once with
//! `CARGO_TARGET_DIR=bench/peers/.build/cargo cargo build --release --manifest-path bench/peers/kube-rs/Cargo.toml`
//! (versions pinned by Cargo.lock), runs one process per measurement with
//! KUBECONFIG pointing at the test control plane, reads JSON lines on
//! stdout, and stops it by SIGTERM. Anything for a human goes to stderr.
//!
//! This file holds what both share: JSON lines, the monotonic clock, and
//! this process's memory and CPU readings.

use std::io::Write;

use serde_json::Value;

/// Prints one JSON line on stdout, fields in the order given (the protocols'
/// order), under the stdout lock so concurrent lines never interleave.
pub fn emit(fields: &[(&str, Value)]) {
    let mut line = String::from("{");
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&Value::from(*key).to_string());
        line.push(':');
        line.push_str(&value.to_string());
    }
    line.push_str("}\n");
    let mut out = std::io::stdout().lock();
    // A closed stdout means the harness is gone: nothing left to tell.
    let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
}

/// CLOCK_MONOTONIC in microseconds: comparable across processes on one machine.
pub fn monotonic_micros() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is handed.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000 + ts.tv_nsec / 1_000
}

/// This process's user + system CPU time so far, in milliseconds.
pub fn cpu_millis() -> f64 {
    // SAFETY: getrusage only writes the rusage it is handed.
    let ru = unsafe {
        let mut ru = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ms = |tv: libc::timeval| tv.tv_sec as f64 * 1e3 + tv.tv_usec as f64 / 1e3;
    ms(ru.ru_utime) + ms(ru.ru_stime)
}

/// A memory line of /proc/self/status (`VmRSS`, `VmHWM`) in MiB, rounded to 0.1.
pub fn proc_status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or_else(|| panic!("/proc/self/status has no {field}"));
    (kib / 1024.0 * 10.0).round() / 10.0
}

/// Says on stderr, once, what was built in: kube, k8s-openapi and the
/// Kubernetes version it was built for, and whether kube decompresses gzip.
pub fn banner(program: &str) {
    eprintln!(
        "kube-rs {program}: kube {}, kube-runtime {}, k8s-openapi {} (Kubernetes {}), gzip decompression {}",
        env!("BENCH_KUBE_VERSION"),
        env!("BENCH_KUBE_RUNTIME_VERSION"),
        env!("BENCH_K8S_OPENAPI_VERSION"),
        env!("BENCH_KUBERNETES_VERSION"),
        if cfg!(feature = "gzip") {
            "compiled in"
        } else {
            "not compiled in (not a default feature of kube)"
        },
    );
}

/// With RUST_LOG set (e.g. `RUST_LOG=kube=debug`), kube's tracing goes to
/// stderr, each request with its URL; without it, nothing is installed.
pub fn init_tracing() {
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .init();
    }
}

/// Exits with code 3 and the reason on stderr: an option this framework
/// cannot honour.
pub fn unsupported(reason: &str) -> ! {
    eprintln!("{reason}");
    std::process::exit(3)
}
