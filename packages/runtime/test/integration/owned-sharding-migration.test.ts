// No owner is reconciled by two members at once while its owned objects are
// divided by the owner-slot label, against the real API server: an upgrade
// (children made before the label existed, found by each member's one LIST
// of unlabelled objects and labelled), a third member joining while the
// first two take their slots and label them, then labels edited by hand to
// another member's slot or removed.
// Every reconcile's span is recorded with whether it found its Widget in the
// member's cache; none is deleted, so a reconcile that finds nothing is one
// of an object outside the member's slots (the dequeue guard's job).
import { strict as assert } from "node:assert";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigMaps } from "@tessera/client";
import { JsonLogger } from "@tessera/core";
import { eventually, useControlPlane } from "@tessera/testenv";
import { OWNER_SLOT_LABEL, ownerSlotLabelValue } from "@tessera/sharding";
import { SlotSpace } from "@tessera/sharding/ranges";
import { ApiClient, Manager, Tokens } from "../../src/index.js";
import { nowMicros, Widgets, type Widget } from "./widget.js";
import { overlappingSpans, RunningManagers, type ReconcileSpan } from "./support/ring-members.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

interface Span extends ReconcileSpan {
  /** Whether the Widget was in the member's cache when its reconcile started. */
  readonly found: boolean;
}

describe("owned objects divided by the owner-slot label: no owner reconciled by two members at once (real API server)", function () {
  this.timeout(120_000);
  const env = useControlPlane();
  let api: ApiClient;
  before(async () => {
    await installWidgetCrd(env.cp);
    api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
  });

  it("through an upgrade's unlabelled children, a member joining as they are labelled and hand-edited labels: every child labelled with its owner's slot, each owner reconciled by one member at a time and only by its own", async () => {
    const ns = await createNamespace(env.cp, "owned-migration");
    const space = new SlotSpace(256);
    const names = Array.from({ length: 60 }, (_, i) => `w${i}`);
    const widgets = new Map<string, Widget>();
    // Before the upgrade: each Widget controls a ConfigMap without the owner-slot label.
    await Promise.all(
      names.map(async (name) => {
        const w = await api.create(Widgets, { metadata: { name, namespace: ns } });
        widgets.set(name, w);
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
      }),
    );
    const slotOf = (name: string) => ownerSlotLabelValue(widgets.get(name)!.metadata!.uid!, space);

    const spans: Span[] = [];
    const logged: string[] = [];
    const managers = new Map<string, Manager>();
    const running = new RunningManagers();
    // Slow reconciles until every member has looked for unlabelled children, so the first two
    // have queues to hand over when the third joins.
    let reconcileMs = 150;
    const member = async (identity: string) => {
      const manager = await Manager.create({
        config: {
          mode: "sharded",
          name: "owned-migration",
          namespace: ns,
          identity,
          healthBindAddress: "0",
          metricsBindAddress: "0",
          logLevel: "error",
          // Leases long enough that a busy machine does not fence a member: no member crashes here,
          // so no slot waits for a Lease to expire.
          leaderElection: { leaseDurationMs: 10_000, renewDeadlineMs: 8_000, retryPeriodMs: 500 },
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
          // Read first, as a reconciler does: a member reconciling another member's Widget
          // finds nothing in its cache, and would take it for deleted.
          const widget = ctx.current();
          const span = {
            member: identity,
            name: request.name,
            found: widget !== undefined,
            start: nowMicros(),
          };
          try {
            await sleep(reconcileMs);
            if (widget === undefined) return;
            await client.apply(
              ConfigMaps,
              { metadata: { name: `cm-${request.name}`, namespace: ns }, data: { owner: request.name } },
              { controller: widget, force: true },
            );
          } finally {
            spans.push({ ...span, end: nowMicros() });
          }
        });
      managers.set(identity, manager);
      return running.start(manager);
    };
    const owners = async (manager: Manager) =>
      (await manager.get(Tokens.Client).list(Widgets, { namespace: ns })).map((w) => w.metadata!.name!);
    const children = async () =>
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
    const outside = () => spans.filter((s) => !s.found).map((s) => `${s.member} ${s.name}`);

    try {
      // Two members start together over the unlabelled children, as after a rolling upgrade, and a
      // third joins while their first assignment is handed out and they look for unlabelled
      // children and label them: the ring moves slots during the migration.
      await Promise.all([member("member-a"), member("member-b"), sleep(300).then(() => member("member-c"))]);
      const looked = (identity: string) =>
        logged.find((l) => l.includes(identity) && l.includes("found once"));
      await eventually(
        "every member took slots and looked for unlabelled children",
        () => [...managers.keys()].every((m) => looked(m) !== undefined),
        30_000,
      );
      const found = [...managers.keys()].map(
        (m) => (JSON.parse(looked(m)!) as { ownedHere: number }).ownedHere,
      );
      assert.ok(
        found.reduce((a, b) => a + b, 0) > 0,
        `the members found unlabelled children of their slots: ${found.join(", ")}`,
      );
      reconcileMs = 5;
      await eventually(
        "every child labelled with its owner's slot",
        async () => {
          const cms = await children();
          return (
            cms.length === names.length &&
            cms.every((c) => c.metadata?.labels?.[OWNER_SLOT_LABEL] === slotOf(c.metadata!.name!.slice(3)))
          );
        },
        60_000,
      );
      await settle();
      assert.deepEqual(outside(), [], "reconciles of Widgets outside the member's slots (none was deleted)");
      assert.deepEqual(overlappingSpans(spans), [], "Widgets reconciled by two members at once");
      const unreconciled = names.filter((n) => !spans.some((s) => s.name === n && s.found));
      assert.deepEqual(unreconciled, [], "pre-upgrade Widgets never reconciled");
      // Each member looked for unlabelled children once.
      for (const identity of managers.keys()) {
        const lines = logged.filter((l) => l.includes(identity) && l.includes("found once"));
        assert.equal(lines.length, 1, `${identity}: ${logged.join("\n") || "nothing logged"}`);
      }

      // Labels edited by hand: one to a slot of another member, one removed, on Widgets of
      // different members. Each is put back by its owner's member, and only that member
      // reconciles the owner: the member whose slot the label now names sees the child
      // and must not take up its owner.
      const shares = new Map<string, string[]>();
      for (const [identity, manager] of managers) shares.set(identity, await owners(manager));
      assert.equal([...shares.values()].flat().length, names.length, "the members divide the Widgets");
      const [x, y, z] = [...shares.keys()];
      assert.ok(shares.get(x!)!.length > 1 && shares.get(y!)!.length > 0 && shares.get(z!)!.length > 0);
      const edits = [
        { victim: shares.get(x!)![0]!, member: x!, label: slotOf(shares.get(y!)![0]!) },
        { victim: shares.get(y!)![1] ?? shares.get(y!)![0]!, member: y!, label: slotOf(shares.get(z!)![0]!) },
        { victim: shares.get(z!)![0]!, member: z!, label: slotOf(shares.get(x!)![1]!) },
        { victim: shares.get(x!)![1]!, member: x!, label: null },
      ];
      const editedAt = nowMicros();
      await Promise.all(
        edits.map(({ victim, label }) =>
          api.patch(
            ConfigMaps,
            { namespace: ns, name: `cm-${victim}` },
            { type: "merge", patch: { metadata: { labels: { [OWNER_SLOT_LABEL]: label } } } },
          ),
        ),
      );
      await eventually("the hand-edited labels are put back", async () => {
        const cms = await children();
        return edits.every(({ victim }) =>
          cms.some(
            (c) =>
              c.metadata?.name === `cm-${victim}` && c.metadata.labels?.[OWNER_SLOT_LABEL] === slotOf(victim),
          ),
        );
      });
      await settle();
      for (const { victim, member: own } of edits) {
        const later = spans.filter((s) => s.name === victim && s.start >= editedAt);
        assert.ok(later.length > 0, `${victim} was reconciled after its child's label was edited`);
        assert.deepEqual(
          [...new Set(later.map((s) => s.member))],
          [own],
          `${victim} (of ${own}) reconciled after the edit by ${later.map((s) => s.member).join(", ")}`,
        );
      }
      assert.deepEqual(outside(), [], "reconciles of Widgets outside the member's slots (none was deleted)");
      assert.deepEqual(overlappingSpans(spans), [], "Widgets reconciled by two members at once");
    } finally {
      await running.stopAll();
    }
  });
});
