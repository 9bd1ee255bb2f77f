//! The kube-rs informer contender of bench/peers (cold-sync.js, churn.js,
//! fan-out.js): a kube-runtime `reflector` over a `watcher`, written as
//! kube-runtime's docs recommend, speaking "the informer protocol" of
//! bench/peers/README.md: configured by BENCH_* environment variables, JSON
//! lines on stdout, anything for a human on stderr.
//!
//! ```text
//! {"ev":"synced","objects":N,"resourceVersion":"R","ms":T,"cpuMs":C,"peakRssMiB":P,"baselineRssMiB":B,"rssMiB":S}
//! {"ev":"e","n":"<name>","rv":"<resourceVersion>","t":<µs of CLOCK_MONOTONIC>}   (BENCH_EVENTS=1, after synced)
//! ```
//!
//! Synced is the watcher's `Event::InitDone`, by which the reflector has
//! swapped the initial list into its store. The harness runs it once per
//! measurement with KUBECONFIG pointing at the test control plane and, with
//! BENCH_EVENTS=1, stops it by SIGTERM (exit 0). What kube-rs cannot honour
//! exits 3 with the reason on stderr: BENCH_WIRE=protobuf (kube-rs speaks
//! JSON only) and BENCH_SHARD_SELECTOR (`watcher::Config` has no way to add
//! a `shardSelector` query parameter).

use std::{fmt::Debug, pin::pin, time::Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::{
    NamespaceResourceScope,
    api::core::v1::{ConfigMap, Pod},
};
use kube::{
    Api, Client, Resource, ResourceExt,
    runtime::{WatchStreamExt, reflector, watcher},
};
use serde_json::{Value, json};
use tessera_bench_kube_rs::{
    banner, cpu_millis, emit, init_tracing, monotonic_micros, proc_status_mib, unsupported,
};
use tokio::signal::unix::{SignalKind, signal};

/// The BENCH_* environment.
struct Options {
    namespace: Option<String>, // None: all namespaces
    watch_list: bool,
    label_selector: Option<String>,
    strip_managed_fields: bool,
    events: bool,
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

#[tokio::main]
async fn main() {
    init_tracing();
    banner("informer");
    match env("BENCH_WIRE").as_str() {
        "" | "json" => {}
        "protobuf" => unsupported("kube-rs speaks JSON only"),
        other => unsupported(&format!("BENCH_WIRE {other:?}: json or protobuf")),
    }
    if !env("BENCH_SHARD_SELECTOR").is_empty() {
        unsupported(
            "kube-rs cannot pass shardSelector: watcher::Config has label and field selectors only, and no extra query parameters",
        );
    }
    let options = Options {
        namespace: Some(env("BENCH_NAMESPACE")).filter(|ns| !ns.is_empty() && ns != "*"),
        watch_list: match env("BENCH_WATCH_LIST").as_str() {
            "1" => true,
            "0" | "" => false,
            other => unsupported(&format!("BENCH_WATCH_LIST {other:?}: 0 or 1")),
        },
        label_selector: Some(env("BENCH_LABEL_SELECTOR")).filter(|s| !s.is_empty()),
        strip_managed_fields: env("BENCH_STRIP_MANAGED_FIELDS") == "1",
        events: env("BENCH_EVENTS") == "1",
    };
    let client = Client::try_default().await.unwrap_or_else(|err| {
        eprintln!("kubeconfig: {err}");
        std::process::exit(1)
    });
    match env("BENCH_RESOURCE").as_str() {
        "" | "configmaps" => run::<ConfigMap>(client, options).await,
        "pods" => run::<Pod>(client, options).await,
        other => unsupported(&format!("BENCH_RESOURCE {other:?}: configmaps or pods")),
    }
}

async fn run<K>(client: Client, options: Options)
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + k8s_openapi::serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let api: Api<K> = match &options.namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let mut config = watcher::Config::default();
    if options.watch_list {
        config = config.streaming_lists();
    }
    if let Some(selector) = &options.label_selector {
        config = config.labels(selector);
    }
    let mut sigterm = signal(SignalKind::terminate()).expect("SIGTERM handler");

    let baseline_rss = proc_status_mib("VmRSS");
    let cpu0 = cpu_millis();
    let t0 = Instant::now();
    let (store, writer) = reflector::store::<K>();
    let events = watcher(api, config).default_backoff();
    // The transform runs before the store, as the reflector docs show.
    let events = if options.strip_managed_fields {
        events
            .modify(|obj| obj.managed_fields_mut().clear())
            .left_stream()
    } else {
        events.right_stream()
    };
    let mut stream = pin!(reflector(writer, events));

    let mut synced = false;
    loop {
        let event = tokio::select! {
            event = stream.try_next() => event,
            _ = sigterm.recv() => std::process::exit(0),
        };
        match event {
            Ok(Some(watcher::Event::InitDone)) if !synced => {
                synced = true;
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                let cpu = cpu_millis() - cpu0;
                let peak = proc_status_mib("VmHWM");
                let rss = proc_status_mib("VmRSS");
                let objects = store.state();
                let highest = objects
                    .iter()
                    .filter_map(|obj| obj.resource_version()?.parse::<u64>().ok())
                    .max();
                emit(&[
                    ("ev", json!("synced")),
                    ("objects", json!(objects.len())),
                    (
                        "resourceVersion",
                        json!(highest.map_or(String::new(), |rv| rv.to_string())),
                    ),
                    ("ms", json!(ms.round() as u64)),
                    ("cpuMs", json!(cpu.round() as u64)),
                    ("peakRssMiB", json!(peak)),
                    ("baselineRssMiB", json!(baseline_rss)),
                    ("rssMiB", json!(rss)),
                ]);
                if !options.events {
                    std::process::exit(0);
                }
            }
            Ok(Some(watcher::Event::Apply(obj))) if synced => {
                let t = monotonic_micros();
                emit(&[
                    ("ev", json!("e")),
                    ("n", json!(obj.name_any())),
                    (
                        "rv",
                        Value::from(obj.resource_version().unwrap_or_default()),
                    ),
                    ("t", json!(t)),
                ]);
            }
            Ok(Some(_)) => {}
            // The watcher retries (with backoff) after an error: say it, go on.
            Err(err) => eprintln!("watcher: {err}"),
            Ok(None) => {
                eprintln!("watcher stream ended");
                std::process::exit(1)
            }
        }
    }
}
