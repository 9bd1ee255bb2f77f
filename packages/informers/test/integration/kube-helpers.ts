import { strict as assert } from "node:assert";
import type { ControlPlane } from "@tessera/testenv";
import type { KubeObject } from "@tessera/client";

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
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A request as the admin; resolves with the status and the parsed body (when JSON). */
export async function send(
  cp: ControlPlane,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<{ status: number; body: unknown }> {
  const res = await cp.raw(path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": contentType } }),
  });
  let parsed: unknown = res.body;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

/** Creates `obj` at `path`, asserting 201. */
export async function create<T>(cp: ControlPlane, path: string, obj: unknown): Promise<T> {
  const res = await send(cp, "POST", path, obj);
  assert.equal(res.status, 201, `POST ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body as T;
}

/** A LIST of `path`: its items and resourceVersion. */
export async function list<T extends KubeObject>(
  cp: ControlPlane,
  path: string,
): Promise<{ items: T[]; resourceVersion: string }> {
  const res = await cp.raw(path);
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  const parsed = JSON.parse(res.body) as { items: T[]; metadata: { resourceVersion: string } };
  return { items: parsed.items, resourceVersion: parsed.metadata.resourceVersion };
}

/**
 * The sum of the samples of Prometheus metric `name` whose labels include
 * every pair of `labels`, in the text exposition format.
 */
export function metricSum(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const close = line.lastIndexOf("}");
    const labelText = close === -1 ? "" : line.slice(name.length + 1, close);
    const value = Number(
      line
        .slice(close === -1 ? name.length + 1 : close + 1)
        .trim()
        .split(" ")[0],
    );
    const found = new Map<string, string>();
    for (const m of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      found.set(m[1] as string, m[2] as string);
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) sum += value;
  }
  return sum;
}

/** Waits (with a real-time limit, not an assertion on time) until `done()` holds. */
export { eventually } from "@tessera/testenv";

/** Resolves after `ms` of real time. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
