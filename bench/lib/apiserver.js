// What benchmarks against the test control plane share: loading objects
// through the API with retries, and reading the kube-apiserver's own CPU time
// from /proc (on Linux), to show the server's side of a sync.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export async function pool(count, concurrency, work) {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

export async function post(cp, path, body) {
  for (let attempt = 0; ; attempt++) {
    const res = await cp.raw(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    if (res.status === 201) return;
    if (res.status !== 429 && res.status < 500)
      throw new Error(`POST ${path}: ${res.status} ${res.body.slice(0, 200)}`);
    if (attempt > 20) throw new Error(`POST ${path}: ${res.status} after retries`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** /proc/<pid>/stat split after the command name (which may hold spaces): [state, ppid, ...]. */
function procStat(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return {
    comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
    fields: stat.slice(stat.lastIndexOf(")") + 2).split(" "),
  };
}

/** The pid of this process's kube-apiserver child, or undefined where there is no /proc. */
export function apiserverPid() {
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { comm, fields } = procStat(entry);
      if (comm === "kube-apiserver" && Number(fields[1]) === process.pid) return Number(entry);
    } catch {
      // Gone meanwhile, or not readable.
    }
  }
  return undefined;
}

/** User + system CPU time of a process so far, in ms (utime and stime are fields 14 and 15). */
export function cpuMsOf(pid) {
  const { fields } = procStat(pid);
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/**
 * The apiserver's own count of requests for `resource`, by verb (LIST, WATCH,
 * GET, ...), from apiserver_request_total on /metrics; diff two readings to
 * count what a contender asked for.
 * @param {import("@tessera/testenv").ControlPlane} cp
 * @returns {Promise<Record<string, number>>}
 */
export async function requestCounts(cp, resource) {
  const res = await cp.raw("/metrics");
  /** @type {Record<string, number>} */
  const counts = {};
  for (const line of res.body.split("\n")) {
    if (!line.startsWith("apiserver_request_total{") || !line.includes(`resource="${resource}"`)) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? "?";
    counts[verb] = (counts[verb] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return counts;
}

/** `after - before`, verb by verb, leaving out verbs with no requests. */
export function countsSince(
  /** @type {Record<string, number>} */ before,
  /** @type {Record<string, number>} */ after,
) {
  /** @type {Record<string, number>} */
  const since = {};
  for (const [verb, n] of Object.entries(after))
    if (n > (before[verb] ?? 0)) since[verb] = n - (before[verb] ?? 0);
  return since;
}
