//! The kube-rs contender of bench/runtime/throughput.js: a kube-runtime
//! `Controller` with a no-op reconciler on ConfigMaps in all namespaces,
//! written as kube-runtime's docs recommend, speaking the line protocol of
//! bench/runtime/tessera-replica.js on stdout:
//!
//! ```text
//! {"ev":"ready"}                   once the controller's store is ready (`Store::wait_until_ready`)
//! {"ev":"r","n":<name>,"t":<µs>,"w":<µs>}
//!                                  the first reconcile of each ConfigMap in $BENCH_NAMESPACE
//!                                  (µs of CLOCK_MONOTONIC, comparable across processes), and
//!                                  when its first event came out of the watcher ("w": decoded,
//!                                  before the store; the nearest to the socket kube-runtime shows)
//! {"ev":"count","total":<n>}       reconciles so far, every 500 ms
//! ```
//!
//! Configuration as kube finds it (KUBECONFIG, in-cluster). Concurrency 16,
//! as controller-runtime's MaxConcurrentReconciles in bench/runtime/go.
//! Only BENCH_MODE "every-replica": kube-rs has no sharding. SIGTERM shuts
//! the controller down gracefully and exits 0.
//!
//! The controller is built as `Controller::new` builds it (a reflector over a
//! watcher, its applied objects as the trigger: kube-runtime 5.0.0's
//! `Controller::new_with`), through `Controller::for_stream`, so that each
//! watcher event can be timed on its way to the reflector.

use std::{
    collections::{HashMap, HashSet},
    convert::Infallible,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client, ResourceExt,
    runtime::{Controller, WatchStreamExt, controller, controller::Action, reflector, watcher},
};
use serde_json::json;
use tessera_bench_kube_rs::{banner, emit, init_tracing, monotonic_micros, unsupported};

struct Context {
    namespace: String,
    total: AtomicU64,
    seen: Mutex<HashSet<String>>,
    /// When each object's first event came out of the watcher, until its first reconcile.
    arrived: Mutex<HashMap<String, i64>>,
}

async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Context>) -> Result<Action, Infallible> {
    ctx.total.fetch_add(1, Ordering::Relaxed);
    if cm.namespace().as_deref() == Some(ctx.namespace.as_str()) {
        let name = cm.name_any();
        if ctx.seen.lock().unwrap().insert(name.clone()) {
            let t = monotonic_micros();
            match ctx.arrived.lock().unwrap().remove(&name) {
                Some(w) => emit(&[
                    ("ev", json!("r")),
                    ("n", json!(name)),
                    ("t", json!(t)),
                    ("w", json!(w)),
                ]),
                None => emit(&[("ev", json!("r")), ("n", json!(name)), ("t", json!(t))]),
            }
        }
    }
    Ok(Action::await_change())
}

fn error_policy(_: Arc<ConfigMap>, err: &Infallible, _: Arc<Context>) -> Action {
    match *err {}
}

#[tokio::main]
async fn main() {
    init_tracing();
    banner("controller");
    let mode = std::env::var("BENCH_MODE").unwrap_or_default();
    if !mode.is_empty() && mode != "every-replica" {
        unsupported(&format!("kube-rs has no {mode:?} mode"));
    }
    let client = Client::try_default().await.unwrap_or_else(|err| {
        eprintln!("kubeconfig: {err}");
        std::process::exit(1)
    });
    let ctx = Arc::new(Context {
        namespace: std::env::var("BENCH_NAMESPACE").unwrap_or_default(),
        total: AtomicU64::new(0),
        seen: Mutex::new(HashSet::new()),
        arrived: Mutex::new(HashMap::new()),
    });

    // What Controller::new(api, watcher::Config::default()) builds, with a tap between the
    // watcher and the reflector that notes when each object of the namespace first arrived.
    let (reader, writer) = reflector::store();
    let tap = ctx.clone();
    let events =
        watcher(Api::<ConfigMap>::all(client), watcher::Config::default()).map_ok(move |event| {
            if let watcher::Event::Apply(cm) | watcher::Event::InitApply(cm) = &event {
                if cm.namespace().as_deref() == Some(tap.namespace.as_str()) {
                    let seen = tap.seen.lock().unwrap().contains(&cm.name_any());
                    if !seen {
                        tap.arrived
                            .lock()
                            .unwrap()
                            .entry(cm.name_any())
                            .or_insert_with(monotonic_micros);
                    }
                }
            }
            event
        });
    let controller = Controller::for_stream(reflector(writer, events).applied_objects(), reader)
        .with_config(controller::Config::default().concurrency(16))
        .shutdown_on_signal();
    let store = controller.store();
    let counter = ctx.clone();
    tokio::spawn(async move {
        let period = Duration::from_millis(500);
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        loop {
            tick.tick().await;
            emit(&[
                ("ev", json!("count")),
                ("total", json!(counter.total.load(Ordering::Relaxed))),
            ]);
        }
    });

    let running = controller
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move {
            if let Err(err) = result {
                eprintln!("controller: {err}");
            }
        });
    // Awaited on the controller's own task, not a spawned one: in kube-runtime
    // 5.0.0 a store's readiness wakes only the task that polled it last (a
    // oneshot channel holds one waker), and the controller polls it too, so
    // a waiter on another task is never woken. On one task both are polled.
    let ready = async {
        if store.wait_until_ready().await.is_ok() {
            emit(&[("ev", json!("ready"))]);
        }
    };
    tokio::join!(running, ready);
    std::process::exit(0);
}
