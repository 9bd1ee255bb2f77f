// How to keep a cached object compact: heap per object and time per decode
// of the encodings a compact cache could hold, for the ConfigMaps and the
// running Pods of bench/peers/data.js (with the metadata the API server adds,
// managedFields stripped as the runtime's caches strip them): the object
// graph itself (the plain cache), its JSON text as a V8 string (what
// @tessera/informers' CompactStore keeps), the same text as a UTF-8 Buffer,
// V8's structured-clone bytes (v8.serialize), and the text deflated against
// another object's text (CompactStore's encoding "deflate"). In process, no API server:
// the heap (used + external) after full collections, over N objects held in
// a Map; decode time the median of ROUNDS passes over all N, the encodings
// rotated each round. (Kubernetes protobuf is not in the table: the bytes
// the wire sends carry managedFields, Tessera has no encoder to drop them,
// and decoding them costs more than JSON.parse; see the wire's table in
// docs/benchmarks.md.)
// Run: bash scripts/with-node.sh node --expose-gc bench/informers/compact-encoding.js   (N=5000, ROUNDS=5)
import { deserialize, serialize } from "node:v8";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { configMap, pod, podStatus } from "../peers/data.js";

const N = Number(process.env.N ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");

/** What the API server adds to an object it stores. */
function served(obj, i, kind) {
  return {
    apiVersion: "v1",
    kind,
    ...obj,
    metadata: {
      ...obj.metadata,
      namespace: "bench",
      uid: `6f1c2a9e-3b7d-4f8e-9a1b-${String(i).padStart(12, "0")}`,
      resourceVersion: String(100000 + i),
      creationTimestamp: "2026-12-01T10:00:00Z",
    },
  };
}

// Each object built fresh (no shared substructure), as decoding gives them.
const KINDS = {
  ConfigMap: (i) => served(configMap(i), i, "ConfigMap"),
  Pod: (i) => served({ ...pod(i), ...podStatus(i) }, i, "Pod"),
};
const ENCODINGS = {
  object: { encode: (o) => o, decode: (o) => o },
  "JSON string": { encode: (o) => JSON.stringify(o), decode: (s) => JSON.parse(s) },
  "UTF-8 Buffer": {
    encode: (o) => Buffer.from(JSON.stringify(o)),
    decode: (b) => JSON.parse(b.toString("utf8")),
  },
  "v8.serialize": { encode: (o) => serialize(o), decode: (b) => deserialize(b) },
  // As CompactStore's encoding "deflate" keeps it: against the text of an object of the same kind.
  "JSON deflated": {
    encode: (o, dictionary) =>
      deflateRawSync(Buffer.from(JSON.stringify(o)), { ...DEFLATE, dictionary }).toString("latin1"),
    decode: (s, dictionary) =>
      JSON.parse(
        inflateRawSync(Buffer.from(s, "latin1"), { windowBits: DEFLATE.windowBits, dictionary }).toString(),
      ),
  },
};
const DEFLATE = { level: 1, memLevel: 2, windowBits: 13 };

function heap() {
  for (let i = 0; i < 4; i++) globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const [kind, make] of Object.entries(KINDS)) {
  const names = Object.keys(ENCODINGS);
  const dictionary = Buffer.from(JSON.stringify(make(N)));
  const bytes = {};
  const decodeUs = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      const { encode, decode } = ENCODINGS[name];
      const before = heap();
      const held = new Map();
      for (let i = 0; i < N; i++) held.set(`bench/${i}`, encode(make(i), dictionary));
      const after = heap();
      if (round === 0) bytes[name] = (after - before) / N;
      let sink = 0;
      const t0 = performance.now();
      for (const value of held.values()) sink += decode(value, dictionary).metadata.name.length;
      decodeUs[name].push(((performance.now() - t0) * 1000) / N);
      if (sink === 0) throw new Error("nothing decoded");
      held.clear();
    }
  }
  const jsonBytes = JSON.stringify(make(0)).length;
  for (const name of names) {
    rows.push({ kind, jsonBytes, name, bytes: bytes[name], us: median(decodeUs[name]) });
  }
}
console.log(`# ${N} objects, ${ROUNDS} rounds (encodings rotated), Node ${process.version}`);
console.log("| object | JSON bytes | kept as | heap per object | x object graph | decode per read |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) {
  const base = rows.find((x) => x.kind === r.kind && x.name === "object");
  console.log(
    `| ${r.kind} | ${r.jsonBytes} | ${r.name} | ${Math.round(r.bytes)} B | ${(r.bytes / base.bytes).toFixed(2)} | ${r.name === "object" ? "none" : `${r.us.toFixed(1)} µs`} |`,
  );
}
