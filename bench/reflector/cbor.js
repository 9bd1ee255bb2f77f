// CBOR against JSON for a custom resource collection (issue 18): whether the
// v1.37 kube-apiserver serves CBOR (KEP-4222, feature gate
// CBORServingAndStorage), and what it would save. A control plane with the
// gate on; a CRD; OBJECTS custom resources of about 1 KiB (default 10,000).
// For each format, ROUNDS times (default 5, the formats alternating): one
// LIST of the whole collection and one watch-list stream to its end bookmark,
// received in this process, then decoded (JSON.parse per line or whole body;
// cborg, a well-kept pure-JavaScript CBOR decoder, for application/cbor and
// application/cbor-seq). Reported: bytes, time to receive, time to decode,
// the apiserver's CPU for serving it, and whether the decoded objects are
// deep-equal to the JSON ones.
// Run: bash scripts/with-node.sh node bench/reflector/cbor.js   (after npm run build)
import { deepStrictEqual } from "node:assert";
import { request } from "node:https";
import { decode as cborDecode, decodeFirst } from "cborg";
import { ControlPlane } from "@tessera/testenv";
import { apiserverPid, cpuMsOf, pool, post } from "../lib/apiserver.js";
import { summarize, writeResult } from "../lib/results.js";
import { text } from "../peers/data.js";

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const GROUP = "bench.tessera.dev";
const NAMESPACE = "cbor";
const collection = `/apis/${GROUP}/v1/namespaces/${NAMESPACE}/widgets`;

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  image: { type: "string" },
                  replicas: { type: "integer" },
                  ratio: { type: "number" },
                  enabled: { type: "boolean" },
                  tags: { type: "array", items: { type: "string" } },
                  config: { type: "string" },
                  ports: {
                    type: "array",
                    items: {
                      type: "object",
                      properties: { name: { type: "string" }, port: { type: "integer" } },
                    },
                  },
                },
              },
              status: {
                type: "object",
                properties: { observedGeneration: { type: "integer" }, phase: { type: "string" } },
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (i) => ({
  apiVersion: `${GROUP}/v1`,
  kind: "Widget",
  metadata: { name: `w-${String(i).padStart(6, "0")}`, labels: { app: "bench", shard: String(i % 16) } },
  spec: {
    image: `registry.example.com/widget:${1 + (i % 9)}.${i % 17}.0`,
    replicas: 1 + (i % 5),
    ratio: (i % 100) / 7,
    enabled: i % 2 === 0,
    tags: ["blue", "green", `t${i % 32}`],
    config: text(i, 700),
    ports: [
      { name: "http", port: 8080 },
      { name: "metrics", port: 9090 },
    ],
  },
});

/** One GET; resolves with the whole body and when its last byte arrived. */
function get(cp, path, accept) {
  const url = new URL(`${cp.apiserverUrl}${path}`);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { Accept: accept },
        ca: cp.caPem,
        cert: cp.adminCredentials.certPem,
        key: cp.adminCredentials.keyPem,
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        const marker = Buffer.from("k8s.io/initial-events-end");
        const done = () =>
          resolve({
            status: res.statusCode,
            type: res.headers["content-type"],
            body: Buffer.concat(chunks),
            ms: performance.now() - t0,
          });
        res.on("data", (c) => {
          chunks.push(c);
          // A watch-list stream stays open: it ends for this benchmark at the bookmark.
          if (url.searchParams.has("watch") && c.indexOf(marker) !== -1) {
            req.destroy();
            done();
          }
        });
        res.on("end", done);
        res.on("error", () => {});
      },
    );
    req.on("error", (/** @type {NodeJS.ErrnoException} */ err) =>
      err.code === "ECONNRESET" ? undefined : reject(err),
    );
    req.end();
  });
}

// The apiserver's CBOR writes Go strings, map keys included, as CBOR byte strings (KEP-4222), which a
// generic decoder hands back as bytes: maps are read as Maps and every byte string turned into text,
// the pass any client would need to get the objects the JSON path gives.
// Maps as Maps (their keys are byte strings); tag 55799 ("self-described CBOR", which the apiserver
// puts first) is its content.
/** @type {{ [tag: number]: import("cborg").TagDecoder }} */
const tags = { 55799: (decodeContent) => decodeContent() };
const options = { useMaps: true, tags };
/** @returns {any} */
function toJsonShape(/** @type {any} */ v) {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("utf8");
  if (v instanceof Map) {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [k, x] of v) out[toJsonShape(k)] = toJsonShape(x);
    return out;
  }
  if (Array.isArray(v)) return v.map(toJsonShape);
  return v;
}
const decode = (/** @type {Buffer} */ b) => toJsonShape(cborDecode(b, options));
/** Each item of a CBOR sequence, until the bytes run out (a partial last item throws). */
function decodeMultiple(/** @type {Buffer} */ b, /** @type {(v: any) => void} */ each) {
  /** @type {Uint8Array} */
  let rest = b;
  while (rest.length > 0) {
    const [value, remainder] = decodeFirst(rest, options);
    each(toJsonShape(value));
    rest = remainder;
  }
}

const watchList =
  "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=";
const FORMATS = {
  json: {
    accept: "application/json",
    list: (body) => JSON.parse(body.toString("utf8")).items,
    stream: (body) =>
      body
        .toString("utf8")
        .split("\n")
        .filter((l) => l.length > 0)
        // The stream was cut at the bookmark: its own line may be partial.
        .flatMap((l) => {
          try {
            return [JSON.parse(l)];
          } catch {
            return [];
          }
        })
        .filter((e) => e.type === "ADDED")
        .map((e) => e.object),
  },
  cbor: {
    accept: "application/cbor",
    list: (body) => decode(body).items,
    stream: (body) => {
      /** @type {any[]} */
      const events = [];
      // The stream was cut after the bookmark: a last partial item may follow it.
      try {
        decodeMultiple(body, (e) => {
          events.push(e);
        });
      } catch {
        // the partial tail
      }
      return events.filter((e) => e.type === "ADDED").map((e) => e.object);
    },
  },
};

const cp = new ControlPlane({ featureGates: { CBORServingAndStorage: true } });
await cp.start();
try {
  await post(cp, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  for (let i = 0; ; i++) {
    const res = await cp.raw(`/apis/${GROUP}/v1`);
    if (res.status === 200) break;
    if (i > 100) throw new Error("the CRD was not served");
    await new Promise((r) => setTimeout(r, 100));
  }
  await post(cp, "/api/v1/namespaces", { metadata: { name: NAMESPACE } });
  const t0 = performance.now();
  await pool(OBJECTS, 64, (i) => post(cp, collection, widget(i)));
  console.log(`created ${OBJECTS} Widgets in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const probe = await get(cp, `${collection}?limit=1`, "application/cbor");
  console.log(`Accept: application/cbor -> HTTP ${probe.status}, Content-Type ${probe.type}`);
  if (probe.status !== 200 || !String(probe.type).startsWith("application/cbor")) {
    console.log("the apiserver does not serve CBOR for custom resources here: nothing to measure");
    process.exit(0);
  }
  const apiserver = apiserverPid();
  /** @type {Record<string, any[]>} */
  const runs = {};
  /** @type {Record<string, any[]>} */
  const decoded = {};
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ["json", "cbor"] : ["cbor", "json"];
    for (const format of order) {
      for (const [op, query] of [
        ["LIST", ""],
        ["watch-list", watchList],
      ]) {
        const key = `${op} ${format}`;
        const cpu0 = apiserver === undefined ? 0 : cpuMsOf(apiserver);
        const res = await get(cp, `${collection}${query}`, FORMATS[format].accept);
        const apiserverCpuMs = apiserver === undefined ? undefined : Math.round(cpuMsOf(apiserver) - cpu0);
        if (res.status !== 200) throw new Error(`${key}: HTTP ${res.status}`);
        const d0 = performance.now();
        const items = op === "LIST" ? FORMATS[format].list(res.body) : FORMATS[format].stream(res.body);
        const decodeMs = performance.now() - d0;
        if (items.length !== OBJECTS) throw new Error(`${key}: ${items.length} objects, not ${OBJECTS}`);
        decoded[key] = items;
        (runs[key] ??= []).push({
          bytes: res.body.length,
          receiveMs: Math.round(res.ms),
          decodeMs: Math.round(decodeMs),
          apiserverCpuMs,
          type: res.type,
        });
      }
    }
  }
  // The same objects either way? (CBOR has no place for JSON's number forms: compare as JSON would read them.)
  const same = (a, b) => {
    try {
      deepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
      return "yes";
    } catch (err) {
      return `no: ${String(err.message).split("\n").slice(0, 6).join(" ")}`;
    }
  };
  console.log(`LIST: CBOR objects deep-equal to JSON's: ${same(decoded["LIST cbor"], decoded["LIST json"])}`);
  console.log(
    `watch-list: CBOR objects deep-equal to JSON's: ${same(decoded["watch-list cbor"], decoded["watch-list json"])}`,
  );
  console.log(
    `\n| ${OBJECTS} Widgets | content type | bytes | receive | decode | receive + decode | apiserver CPU |`,
  );
  console.log("|---|---|---|---|---|---|---|");
  const rows = [];
  for (const [key, all] of Object.entries(runs)) {
    const pick = (f) => summarize(all.map(f));
    const row = {
      key,
      type: all[0].type,
      bytes: all[0].bytes,
      receiveMs: pick((x) => x.receiveMs),
      decodeMs: pick((x) => x.decodeMs),
      totalMs: pick((x) => x.receiveMs + x.decodeMs),
      apiserverCpuMs: apiserver === undefined ? undefined : pick((x) => x.apiserverCpuMs),
    };
    rows.push(row);
    console.log(
      `| ${key} | ${row.type} | ${(row.bytes / 2 ** 20).toFixed(2)} MiB | ${row.receiveMs.median} ms | ${row.decodeMs.median} ms | ${row.totalMs.median} ms | ${row.apiserverCpuMs?.median ?? "n/a"} ms |`,
    );
  }
  writeResult({
    name: "reflector-cbor",
    title: `Custom resources, CBOR against JSON: ${OBJECTS.toLocaleString("en-US")} objects received and decoded`,
    unit: "ms",
    lowerIsBetter: true,
    groups: ["LIST", "watch-list"].map((op) => ({
      label: op,
      bars: rows
        .filter((r) => r.key.startsWith(`${op} `))
        .map((r) => ({ label: r.key.slice(op.length + 1), ...r.totalMs })),
    })),
    note: `receive + decode in one Node process; median of ${ROUNDS} rounds, whiskers min to max`,
    rows,
  });
} finally {
  await cp.stop();
}
