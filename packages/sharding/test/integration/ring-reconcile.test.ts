import { strict as assert } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { useControlPlane, type ControlPlane } from "@tessera/testenv";
import { ConfigMapAssignmentStore } from "../../src/index.js";
import { isSettled, SlotSpace } from "../../src/ranges.js";

/** Where the ConfigMaps being reconciled live. */
const NS = "ledger";
/** Where the ring's Leases and assignment live. */
const RING_NS = "ledger-ring";
const RING = "ledger";
const OBJECTS = 5_000;
/** Concurrent writers, each pausing between its writes: about 150 updates a second here. */
const WRITE_LANES = 4;
const WRITE_PAUSE_MS = 15;
const SCRIPT = fileURLToPath(new URL("./ring-reconcile-member.js", import.meta.url));

/** Machine-wide monotonic time in microseconds, the same scale the member processes print. */
const now = () => Number(process.hrtime.bigint() / 1000n);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stretch of time during which one process held one slot: from its gain to its release. */
interface SlotWindow {
  identity: string;
  slot: number;
  start: number;
  end: number;
}

/** One reconcile, as the member printed it; `end` is the kill time for a process killed mid-reconcile. */
interface Reconcile {
  identity: string;
  key: string;
  /** The resourceVersion in the cache when it began; null: the object was not cached. */
  startRv: string | null;
  start: number;
  end: number;
  /** Whether the member itself printed the end (false: it was SIGKILLed first). */
  ended: boolean;
}

interface Proc {
  identity: string;
  child: ChildProcess;
  exited: Promise<void>;
  epoch: number;
  leading: boolean;
  queued: number;
  inFlight: number;
  /** What the member's ShardedReflector found out: does the server filter by shardSelector? */
  serverFiltering: boolean | undefined;
  stopped: boolean;
  /** slot -> when this process gained it (until it printed "released") */
  holding: Map<number, number>;
  /** key -> the reconcile this process has running on it */
  open: Map<string, { start: number; rv: string | null }>;
}

/** Runs `work(i)` for i in [0, count) with at most `concurrency` in flight. */
async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Updates random ConfigMaps until stopped, never one object twice at once;
 * remembers when the last successful write of each was sent.
 */
function startWriter(cp: ControlPlane, names: readonly string[]) {
  const lastSent = new Map<string, number>();
  const busy = new Set<string>();
  let writes = 0;
  let failures = 0;
  let stopping = false;
  const lane = async () => {
    while (!stopping) {
      const name = names[Math.floor(Math.random() * names.length)]!;
      if (busy.has(name)) continue;
      busy.add(name);
      const sent = now();
      try {
        const res = await cp.raw(`/api/v1/namespaces/${NS}/configmaps/${name}`, {
          method: "PATCH",
          body: JSON.stringify({ data: { write: String(writes) } }),
          headers: { "content-type": "application/merge-patch+json" },
        });
        if (res.status === 200) {
          writes++;
          lastSent.set(name, sent);
        } else {
          failures++;
        }
      } catch {
        // Timed out or cut off: it may or may not have landed. The final
        // resourceVersions are read back from the server, so either is fine.
        failures++;
      }
      busy.delete(name);
      await sleep(WRITE_PAUSE_MS);
    }
  };
  const lanes = Promise.all(Array.from({ length: WRITE_LANES }, lane));
  return {
    lastSent,
    get writes() {
      return writes;
    },
    get failures() {
      return failures;
    },
    async stop() {
      stopping = true;
      await lanes;
    },
  };
}

function ledgerSuite(gate: boolean): void {
  describe(`reconcile ledger with ShardedListAndWatch ${gate ? "on" : "off"}: ${OBJECTS} ConfigMaps under continuous writes, members 1 -> 2 -> 4 -> 3 (SIGKILL) -> 2 (coordinator SIGKILL) -> 1 (SIGTERM)`, function () {
    this.timeout(180_000);
    const procs = new Map<string, Proc>();
    // Registered before the control plane's own hooks, so members go before the apiserver does.
    after(async () => {
      for (const p of procs.values()) p.child.kill("SIGKILL");
      await Promise.all([...procs.values()].map((p) => p.exited));
    });
    const env = useControlPlane({ featureGates: { ShardedListAndWatch: gate } });
    /** Every member process started, alive or not. */
    const lived = new Map<string, Proc>();
    const ledger: Reconcile[] = [];
    const windows: SlotWindow[] = [];
    /** Lines that make no sense as a ledger (checked at the end, not thrown from the stream handler). */
    const garbled: string[] = [];
    const names = Array.from({ length: OBJECTS }, (_, i) => `cm-${i}`);
    let kubeconfig = "";

    function spawnMember(identity: string): Proc {
      const child = spawn(process.execPath, [SCRIPT, kubeconfig, RING_NS, RING, identity, NS], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      const proc: Proc = {
        identity,
        child,
        // "close": the process has exited and every line it wrote has been read.
        exited: new Promise((resolve) => child.once("close", () => resolve())),
        epoch: -1,
        leading: false,
        queued: 0,
        inFlight: 0,
        serverFiltering: undefined,
        stopped: false,
        holding: new Map(),
        open: new Map(),
      };
      createInterface({ input: child.stdout }).on("line", (line) => {
        const ev = JSON.parse(line) as {
          ev: string;
          key?: string;
          rv?: string | null;
          t?: number;
          slots?: number[];
          epoch?: number;
          leading?: boolean;
          queued?: number;
          inFlight?: number;
          serverFiltering?: boolean;
        };
        switch (ev.ev) {
          case "start":
            if (proc.open.has(ev.key!)) garbled.push(`${identity} started ${ev.key} twice at once`);
            proc.open.set(ev.key!, { start: ev.t!, rv: ev.rv ?? null });
            break;
          case "end": {
            const open = proc.open.get(ev.key!);
            if (!open) {
              garbled.push(`${identity} ended ${ev.key} without starting it`);
              break;
            }
            proc.open.delete(ev.key!);
            ledger.push({
              identity,
              key: ev.key!,
              startRv: open.rv,
              start: open.start,
              end: ev.t!,
              ended: true,
            });
            break;
          }
          case "gain":
            for (const s of ev.slots!) proc.holding.set(s, ev.t!);
            break;
          case "released":
            for (const s of ev.slots!) {
              windows.push({ identity, slot: s, start: proc.holding.get(s)!, end: ev.t! });
              proc.holding.delete(s);
            }
            break;
          case "epoch":
            proc.epoch = ev.epoch!;
            proc.queued = ev.queued!;
            proc.inFlight = ev.inFlight!;
            proc.serverFiltering = ev.serverFiltering;
            break;
          case "leader":
            proc.leading = ev.leading!;
            break;
          case "stopped":
            proc.stopped = true;
            break;
        }
        if (process.env.RING_DEBUG && !["start", "end", "epoch", "leader"].includes(ev.ev)) {
          console.log(identity, line.slice(0, 200));
        }
      });
      procs.set(identity, proc);
      lived.set(identity, proc);
      return proc;
    }

    /** SIGKILLs a process; the reconciles it had running end now, at the latest. */
    async function kill(proc: Proc): Promise<void> {
      proc.child.kill("SIGKILL");
      await proc.exited;
      const end = now();
      for (const [key, { start, rv }] of proc.open) {
        ledger.push({ identity: proc.identity, key, startRv: rv, start, end, ended: false });
      }
      proc.open.clear();
      for (const [slot, start] of proc.holding) windows.push({ identity: proc.identity, slot, start, end });
      proc.holding.clear();
      procs.delete(proc.identity);
    }

    async function settledOver(ids: string[]): Promise<void> {
      const store = new ConfigMapAssignmentStore({
        kubeConfig: env.cp.kubeConfig,
        namespace: RING_NS,
        ring: RING,
      });
      const deadline = Date.now() + 60_000;
      let last = "";
      while (Date.now() < deadline) {
        const read = await store.read();
        if (read && isSettled(read.assignment)) {
          const owners = new Set(read.assignment.owners);
          const counts = ids.map((id) => procs.get(id)!.holding.size);
          last = `epoch ${read.assignment.epoch}: owners ${[...owners].join(",")}, slots ${counts.join(",")}`;
          if (
            owners.size === ids.length &&
            ids.every((id) => owners.has(id) && procs.get(id)!.epoch === read.assignment.epoch) &&
            counts.every((c) => c === Math.floor(256 / ids.length) || c === Math.ceil(256 / ids.length))
          ) {
            return;
          }
        }
        await sleep(100);
      }
      assert.fail(`not settled over ${ids.join(",")}: ${last}`);
    }

    before(async () => {
      const post = async (path: string, body: object) => {
        const res = await env.cp.raw(path, {
          method: "POST",
          body: JSON.stringify(body),
          headers: { "content-type": "application/json" },
        });
        assert.equal(res.status, 201, `POST ${path}: ${res.status} ${res.body.slice(0, 300)}`);
      };
      await post("/api/v1/namespaces", { metadata: { name: NS } });
      await post("/api/v1/namespaces", { metadata: { name: RING_NS } });
      await pool(OBJECTS, 32, (i) =>
        post(`/api/v1/namespaces/${NS}/configmaps`, {
          metadata: { name: names[i] },
          data: { write: "create" },
        }),
      );
      kubeconfig = env.cp.writeKubeconfig();
    });

    it("no key is reconciled by two members at once, and every object is reconciled after its last write", async () => {
      const began = Date.now();
      const writer = startWriter(env.cp, names);
      /** Writes done by the end of each step, to show the writer ran through every transition. */
      const writesAt: number[] = [writer.writes];
      const stepTimes: string[] = [];
      const step = async (ids: () => string[]) => {
        await settledOver(ids());
        writesAt.push(writer.writes);
        stepTimes.push(((Date.now() - began) / 1000).toFixed(1));
      };

      spawnMember("m0");
      await step(() => ["m0"]);
      spawnMember("m1");
      await step(() => ["m0", "m1"]);
      spawnMember("m2");
      spawnMember("m3");
      await step(() => ["m0", "m1", "m2", "m3"]);

      await kill([...procs.values()].find((p) => !p.leading)!);
      await step(() => [...procs.keys()]);

      const leader = [...procs.values()].find((p) => p.leading);
      assert.ok(leader, "one process coordinates");
      await kill(leader);
      await step(() => [...procs.keys()]);

      const leaving = [...procs.values()][0]!;
      leaving.child.kill("SIGTERM");
      await leaving.exited;
      assert.ok(leaving.stopped, `${leaving.identity} stopped gracefully on SIGTERM`);
      assert.equal(leaving.open.size, 0, "a member stopped with SIGTERM ends its reconciles before it exits");
      assert.equal(
        leaving.holding.size,
        0,
        "a member stopped with SIGTERM releases every slot before it exits",
      );
      procs.delete(leaving.identity);
      await step(() => [...procs.keys()]);

      await writer.stop();
      for (let k = 1; k < writesAt.length; k++) {
        assert.ok(
          writesAt[k]! > writesAt[k - 1]!,
          `the writer kept writing during step ${k} (${writesAt.join(",")})`,
        );
      }

      // The final state, read back: every object's last resourceVersion.
      const listed = await env.cp.raw(`/api/v1/namespaces/${NS}/configmaps`);
      assert.equal(listed.status, 200, listed.body.slice(0, 300));
      const items = (JSON.parse(listed.body) as { items: V1ConfigMap[] }).items;
      const finalRv = new Map(
        items.map((cm) => [`${NS}/${cm.metadata!.name!}`, BigInt(cm.metadata!.resourceVersion!)]),
      );
      const space = new SlotSpace();
      const slotOfKey = new Map(
        items.map((cm) => [`${NS}/${cm.metadata!.name!}`, space.slotOfKey(cm.metadata!.uid!)]),
      );
      assert.equal(finalRv.size, OBJECTS);
      const lastSentOf = (key: string) => writer.lastSent.get(key.slice(NS.length + 1)) ?? 0;
      /** Whether `r` began after the key's last write was sent and saw its final resourceVersion. */
      const afterLastWrite = (r: Reconcile) =>
        r.ended &&
        r.startRv !== null &&
        BigInt(r.startRv) >= finalRv.get(r.key)! &&
        r.start >= lastSentOf(r.key);

      // Quiescence: every object has such a reconcile and the survivor has nothing queued or running.
      const deadline = Date.now() + 90_000;
      const caughtUp = () => new Set(ledger.filter(afterLastWrite).map((r) => r.key));
      while (Date.now() < deadline) {
        const idle = [...procs.values()].every(
          (p) => p.queued === 0 && p.inFlight === 0 && p.open.size === 0,
        );
        if (idle && caughtUp().size === OBJECTS) break;
        await sleep(250);
      }

      assert.equal(
        garbled.length,
        0,
        `the members' lines do not form a ledger:\n${garbled.slice(0, 10).join("\n")}`,
      );

      // (1) Per key, no two reconciles overlap: sorted by start, each begins after every earlier one ended.
      const all = [...ledger];
      for (const p of procs.values()) {
        for (const [key, { start, rv }] of p.open) {
          all.push({ identity: p.identity, key, startRv: rv, start, end: Infinity, ended: false });
        }
      }
      const byKey = new Map<string, Reconcile[]>();
      for (const r of all) {
        const list = byKey.get(r.key);
        if (list) list.push(r);
        else byKey.set(r.key, [r]);
      }
      const perMember = new Map([...lived.keys()].map((id) => [id, 0]));
      for (const r of ledger) perMember.set(r.identity, perMember.get(r.identity)! + 1);
      console.log(
        `      ledger: ${ledger.length} reconciles of ${byKey.size} keys ` +
          `(${[...perMember].map(([id, c]) => `${id} ${c}`).join(", ")}; ` +
          `${ledger.filter((r) => !r.ended).length} cut by SIGKILL); ` +
          `${writer.writes} writes (${writer.failures} failed); steps settled at ${stepTimes.join(", ")} s; ` +
          `quiet after ${((Date.now() - began) / 1000).toFixed(0)} s`,
      );

      const overlaps: string[] = [];
      for (const [key, list] of byKey) {
        list.sort((a, b) => a.start - b.start);
        let latest = list[0]!;
        for (const cur of list.slice(1)) {
          if (cur.start < latest.end) {
            overlaps.push(
              `${key}: ${cur.identity} started at ${cur.start} while ${latest.identity} ran [${latest.start}, ${latest.end}]`,
            );
          }
          if (cur.end > latest.end) latest = cur;
        }
      }
      assert.equal(
        overlaps.length,
        0,
        `${overlaps.length} overlapping reconciles:\n${overlaps.slice(0, 10).join("\n")}`,
      );

      // (1b) The same, by slot and independent of whether two members happened
      // to pick the same key: a slot is held by one member at a time (from its
      // gain to its release, which is just before it acknowledges the epoch),
      // and every reconcile runs inside a window its member held the key's slot.
      const allWindows = [...windows];
      for (const p of procs.values()) {
        for (const [slot, start] of p.holding)
          allWindows.push({ identity: p.identity, slot, start, end: Infinity });
      }
      const bySlot = new Map<number, SlotWindow[]>();
      for (const w of allWindows) bySlot.set(w.slot, [...(bySlot.get(w.slot) ?? []), w]);
      const doubleHeld: string[] = [];
      for (const [slot, list] of bySlot) {
        list.sort((a, b) => a.start - b.start);
        for (let k = 1; k < list.length; k++) {
          const prev = list[k - 1]!;
          const cur = list[k]!;
          if (cur.start < prev.end) {
            doubleHeld.push(
              `slot ${slot}: ${cur.identity} gained it at ${cur.start} before ${prev.identity} released it at ${prev.end}`,
            );
          }
        }
      }
      assert.equal(
        doubleHeld.length,
        0,
        `${doubleHeld.length} slots held twice:\n${doubleHeld.slice(0, 10).join("\n")}`,
      );
      const outside = all.filter(
        (r) =>
          !(bySlot.get(slotOfKey.get(r.key)!) ?? []).some(
            (w) => w.identity === r.identity && w.start <= r.start && r.end <= w.end,
          ),
      );
      assert.equal(
        outside.length,
        0,
        `${outside.length} reconciles outside their member's hold of the slot:\n` +
          outside
            .slice(0, 10)
            .map((r) => `${r.key} (slot ${slotOfKey.get(r.key)}) by ${r.identity} [${r.start}, ${r.end}]`)
            .join("\n"),
      );

      // (2) Every object was reconciled after its last write, seeing that write.
      const caught = caughtUp();
      const missing = [...finalRv.keys()].filter((k) => !caught.has(k));
      const describeMissing = (key: string) => {
        const last = byKey.get(key)?.at(-1);
        return (
          `${key} (final rv ${finalRv.get(key)}, last write sent at ${lastSentOf(key)}; last reconcile ` +
          (last ? `${last.identity} at ${last.start} saw rv ${last.startRv})` : "none)")
        );
      };
      assert.equal(
        missing.length,
        0,
        `${missing.length} objects not reconciled after their last write:\n` +
          missing.slice(0, 10).map(describeMissing).join("\n"),
      );

      // (3) Every member that lived did some of the work.
      for (const [id, count] of perMember) assert.ok(count > 0, `${id} reconciled nothing`);
      // ... watching its ranges with the server filtering them, or not, as the gate says.
      for (const p of lived.values()) {
        assert.equal(p.serverFiltering, gate, `${p.identity}: server filtering by shardSelector`);
      }
    });
  });
}

ledgerSuite(true);
ledgerSuite(false);
