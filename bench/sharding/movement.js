// Slot movement and ranges per member of the @tessera/sharding planner when a
// ring grows one member at a time (N -> N+1, N = 1..16) and then shrinks back
// (one member leaves), against the naive equal re-split (member i of N owns
// [i * 2^64 / N, (i+1) * 2^64 / N)). Prints Markdown tables.
// Run: bash scripts/with-node.sh node bench/sharding/movement.js [slots]   (after npm run build)
import { planSlots, SlotSpace } from "@tessera/sharding/ranges";

const S = Number(process.argv[2] ?? 256);
const space = new SlotSpace(S);
const SPACE = 1n << 64n;
const name = (i) => `member-${String(i).padStart(2, "0")}`;
const pct = (x) => `${(100 * x).toFixed(2)}%`;

function rangesPerMember(owners, members) {
  return members.map((m) => space.rangesOf(owners.flatMap((o, i) => (o === m ? [i] : []))).length);
}

/** The fraction of the hash space whose owner index differs between equal splits into a and b parts. */
function naiveMoved(a, b) {
  const cuts = (n) => Array.from({ length: n + 1 }, (_, i) => (BigInt(i) * SPACE) / BigInt(n));
  const bounds = [...new Set([...cuts(a), ...cuts(b)])].sort((x, y) => (x < y ? -1 : 1));
  const owner = (n, h) => cuts(n).findLastIndex((c) => c <= h);
  let moved = 0n;
  for (let i = 0; i + 1 < bounds.length; i++) {
    if (owner(a, bounds[i]) !== owner(b, bounds[i])) moved += bounds[i + 1] - bounds[i];
  }
  return Number((moved * 1000000n) / SPACE) / 1000000;
}

const stats = (rs) => `${Math.max(...rs)} / ${(rs.reduce((x, y) => x + y, 0) / rs.length).toFixed(1)}`;

console.log(`### Growing, ${S} slots\n`);
console.log(
  "| N -> N+1 | 1/(N+1) | planner moved | planner - 1/(N+1) | planner ranges per member (max / mean) | naive moved | naive ranges per member |",
);
console.log("|---|---|---|---|---|---|---|");
let owners = planSlots(new Array(S).fill(undefined), [name(0)]).owners;
for (let n = 1; n <= 16; n++) {
  const members = Array.from({ length: n + 1 }, (_, i) => name(i));
  const plan = planSlots(owners, members);
  const moved = plan.moved / S;
  const ideal = 1 / (n + 1);
  console.log(
    `| ${n} -> ${n + 1} | ${pct(ideal)} | ${pct(moved)} | ${((moved - ideal) * 100).toFixed(2)} pp | ` +
      `${stats(rangesPerMember(plan.owners, members))} | ${pct(naiveMoved(n, n + 1))} | 1 |`,
  );
  owners = plan.owners;
}

console.log(`\n### Shrinking from 17, ${S} slots: the member in the middle of the list leaves each time\n`);
console.log(
  "| N+1 -> N | 1/(N+1) | planner moved | planner ranges per member (max / mean) | naive moved (re-split by index) |",
);
console.log("|---|---|---|---|---|");
let members = Array.from({ length: 17 }, (_, i) => name(i));
for (let n = 16; n >= 1; n--) {
  const gone = members[Math.floor(members.length / 2)];
  members = members.filter((m) => m !== gone);
  const plan = planSlots(owners, members);
  console.log(
    `| ${n + 1} -> ${n} | ${pct(1 / (n + 1))} | ${pct(plan.moved / S)} | ` +
      `${stats(rangesPerMember(plan.owners, members))} | ${pct(naiveMoved(n + 1, n))} |`,
  );
  owners = plan.owners;
}
