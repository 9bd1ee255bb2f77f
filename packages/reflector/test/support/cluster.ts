import { strict as assert } from "node:assert";
import type { KubeConfig } from "@kubernetes/client-node";
import type { ControlPlane } from "@tessera/testenv";
import {
  KubeListerWatcher,
  ProtobufCodec,
  type KubeListerWatcherOptions,
  type Store,
} from "../../src/index.js";
import { ConfigMaps, type KubeConfigLike, type KubeObject, type Resource } from "@tessera/client";

export const CONFIGMAPS = ConfigMaps;

/**
 * The wire the integration suite runs on: `TESSERA_TEST_WIRE=protobuf` runs
 * it over Kubernetes protobuf (the test command runs it both ways).
 */
export const TEST_WIRE: "json" | "protobuf" =
  process.env["TESSERA_TEST_WIRE"] === "protobuf" ? "protobuf" : "json";
let codec: ProtobufCodec | undefined;

/** A KubeListerWatcher on the suite's wire. */
export function kubeListerWatcher<T extends KubeObject = KubeObject>(
  kc: KubeConfigLike,
  resource: Resource<T>,
  options: KubeListerWatcherOptions = {},
): KubeListerWatcher<T> {
  codec ??= TEST_WIRE === "protobuf" ? new ProtobufCodec() : undefined;
  return new KubeListerWatcher<T>(kc, resource, {
    wire: TEST_WIRE,
    ...(codec ? { protobufCodec: codec } : {}),
    ...options,
  });
}

/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function pool(
  count: number,
  concurrency: number,
  work: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** An admin request with a JSON body; asserts the expected status and returns the parsed answer. */
export async function send(
  cp: ControlPlane,
  method: string,
  path: string,
  body: unknown,
  expect: number[] = [200, 201],
): Promise<KubeObject> {
  const res = await cp.raw(path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: {
      "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json",
    },
  });
  assert.ok(expect.includes(res.status), `${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as KubeObject;
}

export async function createNamespace(cp: ControlPlane, name: string): Promise<void> {
  await send(cp, "POST", "/api/v1/namespaces", { metadata: { name } });
}

/** Creates `count` ConfigMaps `cm-<i>` in `namespace`, 50 at a time, each with `bytes` of data. */
export async function createConfigMaps(
  cp: ControlPlane,
  namespace: string,
  count: number,
  bytes = 100,
  prefix = "cm",
): Promise<void> {
  const filler = "x".repeat(bytes);
  await pool(count, 50, async (i) => {
    await send(cp, "POST", `/api/v1/namespaces/${namespace}/configmaps`, {
      metadata: { name: `${prefix}-${i}`, labels: { team: i % 2 === 0 ? "red" : "blue" } },
      data: { filler, i: String(i) },
    });
  });
}

/** key -> resourceVersion of a store. */
export function storeVersions(store: Store<KubeObject>): Map<string, string> {
  return new Map(store.list().map((o) => [keyOf(o), o.metadata?.resourceVersion ?? ""]));
}

/** key -> resourceVersion of a fresh consistent LIST (no resourceVersion: a quorum read). */
export async function listVersions(
  kc: KubeConfig,
  resource: Resource,
  namespace?: string,
  labelSelector?: string,
): Promise<Map<string, string>> {
  const lw = new KubeListerWatcher(kc, resource, {
    ...(namespace ? { namespace } : {}),
    ...(labelSelector ? { labelSelector } : {}),
  });
  const list = await lw.list({});
  return new Map(list.items.map((o) => [keyOf(o), o.metadata?.resourceVersion ?? ""]));
}

function keyOf(o: KubeObject): string {
  return o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? "");
}

/** Polls `check` every 50 ms until it returns true, or fails after `timeoutMs` with `what`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Waits until the store holds exactly what a fresh LIST returns. */
export async function waitForStoreEqualToList(
  store: Store<KubeObject>,
  kc: KubeConfig,
  resource: Resource,
  namespace?: string,
  timeoutMs = 60_000,
): Promise<void> {
  let last = "";
  try {
    await waitFor(
      "the store to equal a fresh LIST",
      async () => {
        const want = await listVersions(kc, resource, namespace);
        const got = storeVersions(store);
        last = describeDifference(got, want);
        return last === "";
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${last}`, { cause: err });
  }
}

/** "" when equal, otherwise a short account of the differences. */
export function describeDifference(got: Map<string, string>, want: Map<string, string>): string {
  const missing = [...want.keys()].filter((k) => !got.has(k));
  const extra = [...got.keys()].filter((k) => !want.has(k));
  const stale = [...want.keys()].filter((k) => got.has(k) && got.get(k) !== want.get(k));
  if (missing.length + extra.length + stale.length === 0) return "";
  const some = (ks: string[]): string => ks.slice(0, 3).join(", ");
  return `store has ${got.size}, LIST has ${want.size}; missing ${missing.length} [${some(missing)}], extra ${extra.length} [${some(extra)}], stale ${stale.length} [${some(stale)}]`;
}

/**
 * The apiserver's own count of requests for `resource`, by verb (LIST, WATCH,
 * ...), summed over codes and scopes, from `apiserver_request_total`.
 */
export async function requestCounts(cp: ControlPlane, resource: string): Promise<Record<string, number>> {
  const text = await cp.metrics();
  const counts: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    if (!labels.includes(`resource="${resource}"`) || !labels.includes('subresource=""')) continue;
    const verb = /verb="([A-Z]+)"/.exec(labels)?.[1];
    if (!verb) continue;
    counts[verb] = (counts[verb] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return counts;
}
