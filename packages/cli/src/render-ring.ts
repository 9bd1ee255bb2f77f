import { styleText } from "node:util";
import { formatHashBound, SlotSpace } from "@tessera/sharding/ranges";
import type { RingSnapshot } from "./ring-snapshot.js";

/** How {@link renderRing} draws. */
export interface RenderOptions {
  /** Characters in each member's bar; default 64 (fewer when the ring has fewer slots). */
  readonly width?: number;
  /** Colour per member (ANSI); default off. */
  readonly color?: boolean;
}

const PALETTE = ["cyan", "magenta", "yellow", "green", "blue", "red"] as const;

/**
 * Draws a ring: a header (ring, namespace, epoch, slot count, coordinator),
 * then one line per member: its slots as a bar over the hash space (`█` held,
 * `▒` being released, `·` another's), how many it holds, its slot ranges,
 * the epoch it acknowledged, the objects it caches and whether the server
 * filters its watches; then the free slots, if any.
 */
export function renderRing(ring: RingSnapshot, options: RenderOptions = {}): string {
  const { assignment } = ring;
  const slots = assignment.owners.length;
  const width = Math.min(options.width ?? 64, slots);
  const space = new SlotSpace(slots);
  const nameWidth = Math.max(6, ...ring.members.map((m) => m.identity.length));
  const paint = (i: number, text: string) =>
    options.color ? styleText(PALETTE[i % PALETTE.length]!, text, { validateStream: false }) : text;
  const lines = [
    `ring ${ring.ring} in namespace ${ring.namespace}: epoch ${assignment.epoch}, ${slots} slots, ` +
      `${ring.members.filter((m) => m.holding).length} members, coordinator ${ring.coordinator ?? "(none)"}`,
  ];
  const low = formatHashBound(space.rangeOf(0).start);
  const high = formatHashBound(space.rangeOf(slots - 1).end);
  lines.push(
    `${" ".repeat(nameWidth + 4)}${low}${" ".repeat(Math.max(1, width - low.length - high.length))}${high}`,
  );
  ring.members.forEach((m, i) => {
    let bar = "";
    for (let c = 0; c < width; c++) {
      const from = Math.floor((c * slots) / width);
      const to = Math.floor(((c + 1) * slots) / width);
      let held = false;
      let releasing = false;
      for (let s = from; s < to; s++) {
        if (assignment.owners[s] !== m.identity) continue;
        if (assignment.releasing.has(s)) releasing = true;
        else held = true;
      }
      bar += held ? "█" : releasing ? "▒" : "·";
    }
    const owned = runs(assignment.owners.map((o) => o === m.identity));
    const count = assignment.owners.filter((o) => o === m.identity).length;
    const releasingCount = [...assignment.releasing.keys()].filter(
      (s) => assignment.owners[s] === m.identity,
    ).length;
    const facts = [
      `${count} slots${releasingCount ? ` (${releasingCount} releasing)` : ""}`,
      owned.length ? `slots ${formatRuns(owned)}` : "no slots",
      m.acknowledgedEpoch !== undefined ? `acked ${m.acknowledgedEpoch}` : "not acked",
      m.objectsCached !== undefined ? `${m.objectsCached.toLocaleString("en-US")} objects` : undefined,
      m.serverFiltering === undefined ? undefined : m.serverFiltering ? "server filters" : "client filters",
      m.holding ? undefined : "lease released",
    ].filter((f): f is string => f !== undefined);
    lines.push(`  ${paint(i, m.identity.padEnd(nameWidth))}  ${paint(i, bar)}  ${facts.join(", ")}`);
  });
  const free = runs(assignment.owners.map((o) => o === undefined));
  if (free.length) lines.push(`  ${"(free)".padEnd(nameWidth)}  slots ${formatRuns(free)}`);
  return lines.join("\n") + "\n";
}

/** [start, end] (inclusive) of each run of `true`. */
function runs(flags: readonly boolean[]): [number, number][] {
  const out: [number, number][] = [];
  flags.forEach((f, i) => {
    if (!f) return;
    const last = out[out.length - 1];
    if (last && last[1] === i - 1) last[1] = i;
    else out.push([i, i]);
  });
  return out;
}

function formatRuns(r: [number, number][], max = 4): string {
  const shown = r.slice(0, max).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`));
  return shown.join(",") + (r.length > max ? `,… (${r.length} runs)` : "");
}
