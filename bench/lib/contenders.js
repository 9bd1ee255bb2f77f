// The contenders of bench/peers: building the Go and Rust programs from their
// registries (pinned by go.sum and Cargo.lock), and running any contender of
// the informer protocol (bench/peers/README.md) as a process of its own.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const bench = fileURLToPath(new URL("../", import.meta.url));
const peers = `${bench}peers/`;
const buildDir = `${peers}.build`;

/** Whether `command --version`-like `args` runs. */
const has = (command, args) => spawnSync(command, args).status === 0;

/**
 * Builds the Go module in `dir` (relative to bench/) into bench/peers/.build/<name>.
 * Go caches the build, so a second run takes about a second.
 * @returns {string | undefined} the binary, or undefined (with a note) where Go is missing
 */
export function buildGo(dir, name) {
  if (!has("go", ["version"])) {
    console.log(`no Go toolchain on PATH: skipping ${name}`);
    return undefined;
  }
  const binary = `${buildDir}/${name}`;
  console.log(`building ${name} (go build, modules from the Go module proxy) ...`);
  const build = spawnSync("go", ["build", "-o", binary, "."], {
    cwd: `${bench}${dir}`,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, GOFLAGS: "-mod=mod" },
  });
  if (build.status !== 0) throw new Error(`go build in bench/${dir} failed (${build.status})`);
  return binary;
}

/**
 * Builds the Cargo package in `dir` (relative to bench/peers) in release mode,
 * with the versions Cargo.lock pins; the first build takes minutes.
 * @returns {((bin: string) => string) | undefined} the path of a binary by name, or undefined where Cargo is missing
 */
export function buildCargo(dir) {
  if (!has("cargo", ["--version"])) {
    console.log(`no Cargo on PATH: skipping bench/peers/${dir}`);
    return undefined;
  }
  const target = `${buildDir}/cargo`;
  console.log(`building bench/peers/${dir} (cargo build --release --locked, crates from crates.io) ...`);
  const build = spawnSync(
    "cargo",
    ["build", "--release", "--locked", "--manifest-path", `${peers}${dir}/Cargo.toml`],
    { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, CARGO_TARGET_DIR: target } },
  );
  if (build.status !== 0) throw new Error(`cargo build of bench/peers/${dir} failed (${build.status})`);
  return (bin) => {
    const path = `${target}/release/${bin}`;
    if (!existsSync(path)) throw new Error(`cargo built no ${path}`);
    return path;
  };
}

/** The controller-runtime contender of bench/runtime (a manager with one no-op ConfigMap controller), or undefined without Go. */
export const controllerRuntimeReplica = () => buildGo("runtime/go", "controller-runtime-replica");

/** The Node contenders' program (Tessera, client-node, the limit). */
export const nodeInformer = [
  process.execPath,
  "--expose-gc", // for the live heap it reports after the sync
  fileURLToPath(new URL("../peers/node/informer.js", import.meta.url)),
];

/**
 * @typedef {{ ev: "synced", objects: number, resourceVersion: string, ms: number, cpuMs: number,
 *   peakRssMiB: number, baselineRssMiB: number, rssMiB: number, heapMiB?: number,
 *   baselineHeapMiB?: number, apiserverCpuMs?: number }} Synced (apiserverCpuMs: added by the harness)
 * @typedef {{ name: string, command: string[], env: Record<string, string> }} Contender
 */

/**
 * Starts one informer contender. `synced` resolves with its synced line, or
 * with `{ unsupported }` when it exits with code 3 (it cannot do what was
 * asked), and rejects when it exits otherwise before syncing. `onEvent` sees
 * each `e` line after that.
 * @param {Contender} contender
 * @param {Record<string, string>} env
 * @param {(e: { n: string, rv: string, t: number }) => void} [onEvent]
 */
export function startInformer(contender, env, onEvent) {
  const [bin, ...args] = contender.command;
  const child = spawn(bin, args, {
    env: { ...process.env, ...contender.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c) => {
    stderr = (stderr + c).slice(-4000);
  });
  /** @type {Promise<number | null>} */
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  /** @type {Promise<Synced | { unsupported: string }>} */
  const synced = new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (text) => {
      if (!text.startsWith("{")) return;
      const line = JSON.parse(text);
      if (line.ev === "synced") resolve(line);
      else if (line.ev === "e") onEvent?.(line);
    });
    void exited.then((code) => {
      if (code === 3) resolve({ unsupported: stderr.trim().split("\n").pop() ?? "not supported" });
      else reject(new Error(`${contender.name} exited with ${code} before its synced line:\n${stderr}`));
    });
  });
  /** @type {number | null | undefined} */
  let exitCode;
  void exited.then((code) => (exitCode = code));
  return {
    pid: child.pid,
    /** undefined while it runs. */
    get exitCode() {
      return exitCode;
    },
    synced,
    exited,
    stderr: () => stderr,
    /** SIGTERM, and its exit. */
    stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Runs a contender to its synced line and its exit (it exits by itself without BENCH_EVENTS). */
export async function syncOnce(contender, env, timeoutMs = 600_000) {
  const run = startInformer(contender, env);
  const timer = setTimeout(() => run.stop(), timeoutMs);
  try {
    const synced = await run.synced;
    await run.exited;
    return synced;
  } finally {
    clearTimeout(timer);
  }
}
