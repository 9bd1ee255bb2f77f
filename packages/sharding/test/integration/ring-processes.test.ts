import { strict as assert } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { CoreV1Api } from "@kubernetes/client-node";
import { useControlPlane } from "@tessera/testenv";
import { ConfigMapAssignmentStore } from "../../src/index.js";
import { isSettled } from "../../src/ranges.js";

const NS = "procs";
const RING = "procs";
const SCRIPT = fileURLToPath(new URL("./ring-member-process.js", import.meta.url));

/** A stretch of time during which one process had one slot active. */
interface Interval {
  identity: string;
  slot: number;
  start: number;
  end: number;
}

interface Proc {
  identity: string;
  child: ChildProcess;
  epoch: number;
  leading: boolean;
  exited: Promise<void>;
  /** slot -> start of the interval this process has open on it */
  open: Map<number, number>;
}

/** Machine-wide monotonic time in microseconds, the same scale the member processes print. */
const now = () => Number(process.hrtime.bigint() / 1000n);

describe("ring members as separate processes: 1 -> 2 -> 4 -> 3 (SIGKILL) -> 2 (coordinator SIGKILL) -> 1 (SIGTERM)", function () {
  this.timeout(180_000);
  const env = useControlPlane();
  const procs = new Map<string, Proc>();
  const ledger: Interval[] = [];
  let kubeconfig = "";

  function spawnMember(identity: string): Proc {
    const child = spawn(process.execPath, [SCRIPT, kubeconfig, NS, RING, identity], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const proc: Proc = {
      identity,
      child,
      epoch: -1,
      leading: false,
      open: new Map(),
      exited: new Promise((resolve) => child.once("exit", () => resolve())),
    };
    createInterface({ input: child.stdout }).on("line", (line) => {
      const ev = JSON.parse(line) as {
        ev: string;
        slots?: number[];
        t?: number;
        epoch?: number;
        leading?: boolean;
      };
      if (ev.ev === "gain") for (const s of ev.slots!) proc.open.set(s, ev.t!);
      if (ev.ev === "lose") {
        for (const s of ev.slots!) {
          ledger.push({ identity, slot: s, start: proc.open.get(s)!, end: ev.t! });
          proc.open.delete(s);
        }
      }
      if (process.env.RING_DEBUG && ev.ev !== "epoch" && ev.ev !== "leader") console.log(line.slice(0, 200));
      if (process.env.RING_DEBUG && ev.ev === "leader" && ev.leading !== proc.leading) console.log(line);
      if (ev.ev === "epoch") proc.epoch = ev.epoch!;
      if (ev.ev === "leader") proc.leading = ev.leading!;
    });
    procs.set(identity, proc);
    return proc;
  }

  /** SIGKILLs a process; whatever it had open ends now. */
  async function kill(proc: Proc): Promise<void> {
    proc.child.kill("SIGKILL");
    await proc.exited;
    const end = now();
    for (const [slot, start] of proc.open) ledger.push({ identity: proc.identity, slot, start, end });
    proc.open.clear();
    procs.delete(proc.identity);
  }

  async function settledOver(ids: string[]): Promise<void> {
    const store = new ConfigMapAssignmentStore({ kubeConfig: env.cp.kubeConfig, namespace: NS, ring: RING });
    const deadline = Date.now() + 60_000;
    let last = "";
    while (Date.now() < deadline) {
      const read = await store.read();
      if (read && isSettled(read.assignment)) {
        const owners = new Set(read.assignment.owners);
        const counts = ids.map((id) => procs.get(id)!.open.size);
        last = `epoch ${read.assignment.epoch}: owners ${[...owners].join(",")}, open slots ${counts.join(",")}`;
        if (
          owners.size === ids.length &&
          ids.every((id) => owners.has(id) && procs.get(id)!.epoch === read.assignment.epoch) &&
          counts.every((c) => c === Math.floor(256 / ids.length) || c === Math.ceil(256 / ids.length))
        ) {
          return;
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`not settled over ${ids.join(",")}: ${last}`);
  }

  before(async () => {
    await env.cp.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    kubeconfig = env.cp.writeKubeconfig();
  });

  after(async () => {
    for (const p of procs.values()) p.child.kill("SIGKILL");
    await Promise.all([...procs.values()].map((p) => p.exited));
  });

  it("settles after every step, and no slot is ever active in two processes at once", async () => {
    spawnMember("p0");
    await settledOver(["p0"]);
    spawnMember("p1");
    await settledOver(["p0", "p1"]);
    spawnMember("p2");
    spawnMember("p3");
    await settledOver(["p0", "p1", "p2", "p3"]);

    await kill([...procs.values()].find((p) => !p.leading)!);
    await settledOver([...procs.keys()]);

    const leader = [...procs.values()].find((p) => p.leading);
    assert.ok(leader, "one process coordinates");
    await kill(leader);
    await settledOver([...procs.keys()]);

    const leaving = [...procs.values()][0]!;
    leaving.child.kill("SIGTERM");
    await leaving.exited;
    assert.equal(leaving.open.size, 0, "a process stopped with SIGTERM lets go of every slot itself");
    procs.delete(leaving.identity);
    await settledOver([...procs.keys()]);

    const all = [...ledger];
    for (const p of procs.values()) {
      for (const [slot, start] of p.open) all.push({ identity: p.identity, slot, start, end: Infinity });
    }
    const bySlot = new Map<number, Interval[]>();
    for (const i of all) bySlot.set(i.slot, [...(bySlot.get(i.slot) ?? []), i]);
    assert.equal(bySlot.size, 256, "every slot was worked on");
    for (const [slot, list] of bySlot) {
      list.sort((a, b) => a.start - b.start);
      for (let k = 1; k < list.length; k++) {
        const prev = list[k - 1]!;
        const cur = list[k]!;
        assert.ok(
          cur.start >= prev.end,
          `slot ${slot}: ${cur.identity} started at ${cur.start} before ${prev.identity} let go at ${prev.end}`,
        );
      }
    }
    assert.ok(ledger.length > 256, `handovers happened (${ledger.length} closed intervals)`);
  });
});
