// `tessera shards` against a live three-member ring: three replicas of the
// runtime's example operator in sharded mode, each its own process.
import { strict as assert } from "node:assert";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventually, simpleCrd, useControlPlane } from "@tessera/testenv";
import type { RingJson } from "../../src/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, "../../src/bin.js");
const operator = join(here, "../../../../runtime/dist/examples/widget-operator.js");

describe("tessera shards against a running three-member ring", function () {
  this.timeout(180_000);
  const env = useControlPlane({ crds: [simpleCrd({ group: "example.com", kind: "Widget" })] });
  const replicas: ChildProcess[] = [];
  let kubeconfig: string;

  before(async () => {
    kubeconfig = env.cp.writeKubeconfig();
    for (const identity of ["replica-a", "replica-b", "replica-c"]) {
      replicas.push(
        spawn(process.execPath, [operator], {
          env: {
            ...process.env,
            KUBECONFIG: kubeconfig,
            TESSERA_IDENTITY: identity,
            TESSERA_NAMESPACE: "default",
            TESSERA_LOG_LEVEL: "warn",
            TESSERA_HEALTH_BIND_ADDRESS: "0",
            TESSERA_METRICS_BIND_ADDRESS: "0",
            // Long enough that a member on a busy machine does not fence itself (and exit) mid-test.
            TESSERA_LEADER_ELECTION_LEASE_DURATION_MS: "8000",
            TESSERA_LEADER_ELECTION_RENEW_DEADLINE_MS: "5000",
            TESSERA_LEADER_ELECTION_RETRY_PERIOD_MS: "1000",
          },
          stdio: "ignore",
        }),
      );
    }
    for (let i = 0; i < 30; i++) {
      const res = await env.cp.raw("/apis/example.com/v1/namespaces/default/widgets", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          apiVersion: "example.com/v1",
          kind: "Widget",
          metadata: { name: `w${i}` },
          spec: {},
        }),
      });
      assert.equal(res.status, 201, res.body);
    }
  });

  after(async () => {
    await Promise.all(
      replicas.map(
        (child) =>
          new Promise((resolve) => {
            // A replica whose member fenced itself has exited already (to be restarted, by design).
            if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
            child.once("exit", resolve);
            child.kill("SIGTERM");
          }),
      ),
    );
  });

  const shards = (...args: string[]) =>
    spawnSync(process.execPath, [bin, "shards", "-n", "default", "--kubeconfig", kubeconfig, ...args], {
      encoding: "utf8",
    });

  it("--json shows the settled ring: three members tiling every slot, 30 objects cached, filtered by the server", async () => {
    let ring: RingJson | undefined;
    await eventually(
      "the ring settles with every object cached",
      () => {
        const run = shards("--json");
        if (run.status !== 0) return false;
        ring = (JSON.parse(run.stdout) as RingJson[])[0];
        return (
          ring !== undefined &&
          ring.members.filter((m) => m.holding).length === 3 &&
          ring.assignment.releasing.length === 0 &&
          ring.assignment.owners.every(([, , owner]) => owner !== null) &&
          ring.members.reduce((n, m) => n + (m.objectsCached ?? 0), 0) === 30 &&
          // The probe answers once there are objects to tell by (custom resources are filtered without an echo).
          ring.members.every((m) => m.serverFiltering !== null) &&
          ring.members.every((m) => m.acknowledgedEpoch === ring!.assignment.epoch)
        );
      },
      60_000,
    );
    const settled = ring!;
    assert.deepEqual(
      settled.members.map((m) => m.identity),
      ["replica-a", "replica-b", "replica-c"],
    );
    assert.equal(
      settled.members.reduce((n, m) => n + m.slots, 0),
      settled.assignment.slotCount,
    );
    assert.ok(settled.members.every((m) => m.serverFiltering === true));
    assert.ok(settled.coordinator && settled.members.some((m) => m.identity === settled.coordinator));
  });

  it("draws one line per member with its slots and objects", () => {
    const run = shards();
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.split("\n");
    assert.match(
      lines[0]!,
      /^ring \S+ in namespace default: epoch \d+, 256 slots, 3 members, coordinator replica-/,
    );
    for (const identity of ["replica-a", "replica-b", "replica-c"]) {
      const line = lines.find((l) => l.trimStart().startsWith(identity));
      assert.ok(line, `a line for ${identity}:\n${run.stdout}`);
      assert.match(line, /█/);
      assert.match(line, /\d+ slots, slots [\d,-]+.*, acked \d+, \d+ objects, server filters/);
    }
  });

  it("--watch prints the ring again when it changes (a replica leaves)", async () => {
    const watcher = spawn(
      process.execPath,
      [bin, "shards", "-n", "default", "--kubeconfig", kubeconfig, "--watch", "--json"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    watcher.stdout.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise((resolve) => watcher.on("exit", resolve));
    try {
      await eventually("the first drawing", () => output.includes('"members"'));
      const first = output;
      replicas.pop()!.kill("SIGTERM"); // replica-c hands its slots back, then its Lease
      await eventually("a drawing without replica-c's slots", () => {
        const drawings = output.split(/\n(?=\[)/);
        const last = JSON.parse(drawings[drawings.length - 1]!) as RingJson[];
        // Drawn with no slots while its Lease is handed back, then gone once the coordinator deletes it.
        const c = last[0]!.members.find((m) => m.identity === "replica-c");
        return output !== first && (c === undefined || c.slots === 0);
      });
    } finally {
      watcher.kill("SIGINT");
      await exited;
    }
  });

  it("says where to look when the namespace has no ring", () => {
    const run = spawnSync(
      process.execPath,
      [bin, "shards", "-n", "kube-system", "--kubeconfig", kubeconfig],
      {
        encoding: "utf8",
      },
    );
    assert.equal(run.status, 1);
    assert.match(run.stderr, /no ring in namespace kube-system: .*sharding\.tessera\.dev\/ring/);
  });
});
