// In-process decode of one protobuf LIST of 3,000 running Pods and of 3,000
// ConfigMaps (bench/peers/data.js), with and without managedFields shaped
// (KubeListerWatcherOptions.stripManagedFields, which the runtime's
// informers set), against JSON.parse of the same list as JSON. Median of 7.
// Run: bash scripts/with-node.sh node bench/reflector/decode-protobuf.js   (after npm run build)
import { request } from "node:https";
import { ControlPlane } from "@tessera/testenv";
import { ProtobufCodec } from "@tessera/reflector";
import { populate, populatePods } from "../peers/data.js";

const N = 3000;
const cp = new ControlPlane();
await cp.start();
try {
  await populatePods(cp, "p", N);
  await populate(cp, "c", N);
  /** @returns {Promise<Buffer>} */
  const get = (path) =>
    new Promise((resolve, reject) => {
      const u = new URL(cp.apiserverUrl + path);
      request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          headers: { Accept: "application/vnd.kubernetes.protobuf" },
          ca: cp.caPem,
          cert: cp.adminCredentials.certPem,
          key: cp.adminCredentials.keyPem,
        },
        (res) => {
          /** @type {Buffer[]} */
          const chunks = [];
          res.on("data", (d) => chunks.push(d));
          res.on("end", () => resolve(Buffer.concat(chunks)));
        },
      )
        .on("error", reject)
        .end();
    });
  const codec = new ProtobufCodec();
  await codec.load("v1"); // Pods and ConfigMaps
  const median = (f) => {
    const t = [];
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      f();
      t.push(performance.now() - t0);
    }
    return t.sort((a, b) => a - b)[3];
  };
  console.log(
    `| ${N} objects | protobuf, managedFields shaped | protobuf, left out | JSON.parse (with them) |`,
  );
  console.log("|---|---|---|---|");
  for (const [label, path] of [
    ["Pods", "/api/v1/namespaces/p/pods"],
    ["ConfigMaps", "/api/v1/namespaces/c/configmaps"],
  ]) {
    const body = await get(path);
    const json = JSON.stringify(codec.decodeList(body));
    median(() => codec.decodeList(body)); // warm-up: each message's decoder is generated on first use
    median(() => codec.decodeList(body, { omitManagedFields: true }));
    const full = median(() => codec.decodeList(body));
    const lean = median(() => codec.decodeList(body, { omitManagedFields: true }));
    const parse = median(() => JSON.parse(json));
    const us = (ms) => `${ms.toFixed(1)} ms (${((ms * 1000) / N).toFixed(1)} µs each)`;
    console.log(`| ${label} | ${us(full)} | ${us(lean)} | ${us(parse)} |`);
  }
} finally {
  await cp.stop();
}
