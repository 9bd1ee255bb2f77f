// Records, for the contenders' stderr banner, which kube and k8s-openapi
// were built in (from Cargo.lock) and which Kubernetes version k8s-openapi
// was built for (its build script's `links` metadata).
use std::{env, fs};

fn main() {
    println!("cargo::rerun-if-changed=Cargo.lock");
    let lock = fs::read_to_string("Cargo.lock").unwrap_or_default();
    for (krate, var) in [
        ("kube", "BENCH_KUBE_VERSION"),
        ("kube-runtime", "BENCH_KUBE_RUNTIME_VERSION"),
        ("k8s-openapi", "BENCH_K8S_OPENAPI_VERSION"),
    ] {
        let version = lock
            .split("[[package]]")
            .find(|p| p.lines().any(|l| l.trim() == format!("name = \"{krate}\"")))
            .and_then(|p| {
                p.lines()
                    .find_map(|l| l.trim().strip_prefix("version = \""))
            })
            .map_or("?", |v| v.trim_end_matches('"'));
        println!("cargo::rustc-env={var}={version}");
    }
    // k8s-openapi publishes 0x00_01_MM_00 for Kubernetes 1.MM as DEP_K8S_OPENAPI_<ver>_VERSION.
    let kubernetes = env::vars()
        .find(|(k, _)| k.starts_with("DEP_K8S_OPENAPI") && k.ends_with("_VERSION"))
        .and_then(|(_, v)| v.parse::<u32>().ok())
        .map_or("?".to_string(), |v| format!("1.{}", (v >> 8) & 0xff));
    println!("cargo::rustc-env=BENCH_KUBERNETES_VERSION={kubernetes}");
}
