// Owned objects follow their owner's shard, against the real API server: two
// members of a sharded Widget controller that owns ConfigMaps. The manager's
// client labels each child with its owner's slot; each member caches only
// its owners' children (the server filters by the label set); a handover
// lists only the gained slots' children; children made before the label
// existed are labelled by their owner's reconcile; a label edited by hand is
// put back, and no Widget is ever reconciled by two members at once.
import { strict as assert } from "node:assert";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigMaps } from "@tessera/client";
import { JsonLogger } from "@tessera/core";
import { eventually, parsePrometheusText, useControlPlane } from "@tessera/testenv";
import { OWNER_SLOT_LABEL, ownerSlotLabelValue, slotsOfRange } from "@tessera/sharding";
import { SlotSpace } from "@tessera/sharding/ranges";
import { ApiClient, Manager, Tokens } from "../../src/index.js";
import { Widgets, type Widget } from "./widget.js";
import { overlappingSpans, RunningManagers, type ReconcileSpan } from "./support/ring-members.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

describe("owned objects follow their owner's shard (real API server)", function () {
  this.timeout(180_000);
  const env = useControlPlane();
  let api: ApiClient;
  before(async () => {
    await installWidgetCrd(env.cp);
    api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
  });

  it("two members divide the owned ConfigMaps by the owner-slot label; a handover lists only gained slots; unlabelled children are labelled once; a hand-edited label is put back", async () => {
    const ns = await createNamespace(env.cp, "owned-shard");
    const space = new SlotSpace(256);
    const names = Array.from({ length: 40 }, (_, i) => `w${i}`);
    const widgets = new Map<string, Widget>();
    for (const name of names)
      widgets.set(name, await api.create(Widgets, { metadata: { name, namespace: ns } }));
    const slotOf = (name: string) => ownerSlotLabelValue(widgets.get(name)!.metadata!.uid!, space);
    // Children made before the upgrade: controlled by their Widget, without the label.
    const preUpgrade = new Set(names.slice(0, 8));
    for (const name of preUpgrade) {
      const w = widgets.get(name)!;
      await api.create(ConfigMaps, {
        metadata: {
          name: `cm-${name}`,
          namespace: ns,
          ownerReferences: [
            {
              apiVersion: Widgets.apiVersion,
              kind: Widgets.kind,
              name,
              uid: w.metadata!.uid!,
              controller: true,
            },
          ],
        },
        data: { owner: "before" },
      });
    }
    // Unrelated ConfigMaps: no member caches them.
    for (let i = 0; i < 5; i++)
      await api.create(ConfigMaps, { metadata: { name: `other-${i}`, namespace: ns } });

    const spans: ReconcileSpan[] = [];
    const logged: string[] = [];
    const managers = new Map<string, Manager>();
    const running = new RunningManagers();
    const member = async (identity: string) => {
      const manager = await Manager.create({
        config: {
          mode: "sharded",
          name: "owned-shard",
          namespace: ns,
          identity,
          healthBindAddress: "0",
          metricsBindAddress: "127.0.0.1:0",
          logLevel: "error",
          leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
        },
        kubeConfig: env.cp.kubeConfig,
        env: {},
        logger: new JsonLogger({
          level: "info",
          fields: { identity },
          write: (line) => void (line.includes("owner-slot label") && logged.push(line)),
        }),
      });
      const client = manager.get(Tokens.Client);
      manager
        .controller()
        .named("widgets")
        .for(Widgets, { namespaces: ns })
        .owns(ConfigMaps, { namespaces: ns })
        .complete(async (request, ctx) => {
          const span = {
            member: identity,
            name: request.name,
            start: Date.now(),
            end: Number.POSITIVE_INFINITY,
          };
          spans.push(span);
          try {
            const widget = ctx.current();
            if (widget === undefined) return;
            // The pre-upgrade children are left alone, as by a reconciler that writes a child
            // only when it differs: the migration itself labels them.
            if (preUpgrade.has(request.name)) return;
            await client.apply(
              ConfigMaps,
              { metadata: { name: `cm-${request.name}`, namespace: ns }, data: { owner: request.name } },
              { controller: widget, force: true },
            );
            await sleep(20);
          } finally {
            span.end = Date.now();
          }
        });
      managers.set(identity, manager);
      return running.start(manager);
    };
    /** The Widgets in a member's primary cache (its slots), and the ConfigMaps in its owned cache. */
    const share = async (manager: Manager) => {
      const client = manager.get(Tokens.Client);
      const owners = (await client.list(Widgets, { namespace: ns })).map((w) => w.metadata!.name!);
      const children = (await client.list(ConfigMaps, { namespace: ns })).map((c) => c.metadata!.name!);
      return { owners: owners.sort(), children: children.sort() };
    };
    /** Initial syncs (LIST or watch-list) of each ConfigMap range reflector of a member. */
    const syncs = async (manager: Manager) => {
      const { metrics } = await manager.endpoints();
      const text = await (await fetch(`http://127.0.0.1:${metrics!.port}/metrics`)).text();
      const families = parsePrometheusText(text);
      const out = new Map<string, number>();
      const add = (reflector: string, n: number) => out.set(reflector, (out.get(reflector) ?? 0) + n);
      for (const s of families.get("tessera_reflector_lists_total")?.samples ?? [])
        if (s.labels["resource"] === "configmaps") add(s.labels["reflector"]!, s.value);
      for (const s of families.get("tessera_reflector_watches_total")?.samples ?? [])
        if (s.labels["resource"] === "configmaps" && s.labels["mode"] === "watch-list")
          add(s.labels["reflector"]!, s.value);
      return out;
    };
    const labelled = async () =>
      (await api.list(ConfigMaps, { namespace: ns })).filter((c) => c.metadata?.name?.startsWith("cm-"));
    const settle = async () => {
      let count = -1;
      await eventually("the ring settled", async () => {
        const settled = count === spans.length;
        count = spans.length;
        await sleep(1_500);
        return settled;
      });
    };
    try {
      const a = await member("member-a");
      await eventually(
        "every child labelled with its owner's slot (the pre-upgrade ones by the migration)",
        async () => {
          const cms = await labelled();
          return (
            cms.length === names.length &&
            cms.every((c) => c.metadata?.labels?.[OWNER_SLOT_LABEL] === slotOf(c.metadata!.name!.slice(3)))
          );
        },
        30_000,
      );
      for (const cm of await labelled())
        if (preUpgrade.has(cm.metadata!.name!.slice(3)))
          assert.equal(cm.data?.["owner"], "before", "the migration wrote the label only");
      await eventually("member-a caches every child, no other ConfigMap", async () => {
        const { children } = await share(a);
        return children.length === names.length;
      });
      assert.deepEqual((await share(a)).children, names.map((n) => `cm-${n}`).sort());
      await settle();
      const before = await syncs(a);
      assert.ok(before.size > 0, "member-a's ConfigMap range reflectors synced");

      const b = await member("member-b");
      await eventually(
        "the members divide the Widgets and their children",
        async () => {
          const [sa, sb] = [await share(a), await share(b)];
          return (
            sa.owners.length > 0 &&
            sb.owners.length > 0 &&
            sa.owners.length + sb.owners.length === names.length &&
            sa.children.length + sb.children.length === names.length
          );
        },
        60_000,
      );
      await settle();
      const [sa, sb] = [await share(a), await share(b)];
      assert.deepEqual(
        sa.children,
        sa.owners.map((n) => `cm-${n}`).sort(),
        "member-a holds its owners' children",
      );
      assert.deepEqual(
        sb.children,
        sb.owners.map((n) => `cm-${n}`).sort(),
        "member-b holds its owners' children",
      );

      // The handover relisted nothing member-a kept: no ConfigMap reflector of it synced again,
      // and the pieces it split its range into resumed without a LIST.
      const after = await syncs(a);
      for (const [reflector, n] of after) {
        assert.equal(n, before.get(reflector) ?? 0, `member-a's ${reflector}: no new LIST or watch-list`);
      }
      // member-b listed only the slots it gained: the ranges its ConfigMap reflectors synced
      // (named after their hash range) hold its owners' slots and none of member-a's.
      // (The ring's assignment ConfigMap has a reflector of its own, named without a range.)
      const bSyncs = [...(await syncs(b)).entries()].filter(([r, n]) => n > 0 && r.includes("[0x"));
      assert.ok(bSyncs.length > 0);
      const listed = new Set<string>();
      for (const [reflector] of bSyncs) {
        const m = /\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)/.exec(reflector);
        assert.ok(m, reflector);
        for (const slot of slotsOfRange({ start: BigInt(m[1]!), end: BigInt(m[2]!) }, space))
          listed.add(String(slot));
      }
      for (const owner of sb.owners) assert.ok(listed.has(slotOf(owner)), `member-b listed ${owner}'s slot`);
      for (const owner of sa.owners)
        assert.ok(!listed.has(slotOf(owner)), `member-b did not list ${owner}'s slot`);
      assert.deepEqual(overlappingSpans(spans), [], "Widgets reconciled by two members at once");
      // Each member looked for unlabelled children once, after its first slots synced.
      for (const identity of ["member-a", "member-b"]) {
        const lines = logged.filter((l) => l.includes(identity) && l.includes("found once"));
        assert.equal(lines.length, 1, logged.join("\n") || "nothing logged");
      }

      // A label edited by hand: put back by the owner's next reconcile, by the owner's member only.
      const victim = sb.owners.find((n) => !preUpgrade.has(n))!;
      const wrong = String((Number(slotOf(victim)) + 128) % 256);
      const spansBefore = spans.length;
      await api.patch(
        ConfigMaps,
        { namespace: ns, name: `cm-${victim}` },
        { type: "merge", patch: { metadata: { labels: { [OWNER_SLOT_LABEL]: wrong } } } },
      );
      await eventually("the hand-edited label is put back", async () => {
        const cm = await api.get(ConfigMaps, { namespace: ns, name: `cm-${victim}` });
        return cm?.metadata?.labels?.[OWNER_SLOT_LABEL] === slotOf(victim);
      });
      await settle();
      const later = spans.slice(spansBefore).filter((s) => s.name === victim);
      assert.ok(later.length > 0, "the owner was reconciled");
      assert.deepEqual(
        new Set(later.map((s) => s.member)),
        new Set(["member-b"]),
        "only its member reconciled it",
      );
      assert.deepEqual((await share(b)).children, sb.children, "member-b holds the child again");
      assert.deepEqual(overlappingSpans(spans), [], "Widgets reconciled by two members at once");
    } finally {
      await running.stopAll();
    }
  });
});
