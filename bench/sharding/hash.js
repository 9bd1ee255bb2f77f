// Throughput of the shard hash on random UIDs: @tessera/sharding's fnv1a64Words
// (16-bit limbs), its BigInt result, and a plain BigInt-per-byte FNV-1a 64 for
// comparison; median ns per UID over 7 passes of 200,000 UIDs.
// Run: bash scripts/with-node.sh node bench/sharding/hash.js   (after npm run build)
import { randomUUID } from "node:crypto";
import { fnv1a64, fnv1a64Words, SlotSpace } from "@tessera/sharding/ranges";

const uids = Array.from({ length: 200000 }, () => randomUUID());
function bigintPerByte(s) {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(s, "utf8")) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}
const space = new SlotSpace(256);
/** @type {Array<[string, (uid: string) => number]>} */
const cases = [
  ["fnv1a64Words (two 32-bit halves)", (u) => fnv1a64Words(u).lo],
  ["SlotSpace.slotOfKey (hash + slot)", (u) => space.slotOfKey(u)],
  ["fnv1a64 (BigInt result)", (u) => Number(fnv1a64(u) & 1n)],
  ["BigInt arithmetic per byte (reference)", (u) => Number(bigintPerByte(u) & 1n)],
];
for (const [label, f] of cases) {
  const times = [];
  let sink = 0;
  for (let pass = 0; pass < 7; pass++) {
    const t0 = performance.now();
    for (const u of uids) sink ^= f(u);
    times.push(((performance.now() - t0) * 1e6) / uids.length);
  }
  times.sort((a, b) => a - b);
  console.log(`${label}: ${times[3].toFixed(0)} ns per UID (sink ${sink & 1})`);
}
