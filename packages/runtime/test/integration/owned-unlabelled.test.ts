// The look for owned objects without the owner-slot label, against the real
// API server: a member of a sharded Widget controller that owns ConfigMaps,
// both cached in all namespaces, lists unlabelled ConfigMaps only in the
// namespace its Widgets are in, never in another namespace full of
// unrelated ones. The kube-apiserver's audit log shows every LIST it made
// (path and label selector); the child made before the upgrade is still
// found and labelled by its owner's reconcile.
import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigMaps } from "@tessera/client";
import { JsonLogger } from "@tessera/core";
import { eventually, useControlPlane } from "@tessera/testenv";
import { OWNER_SLOT_LABEL, ownerSlotLabelValue } from "@tessera/sharding";
import { SlotSpace } from "@tessera/sharding/ranges";
import { ApiClient, Manager, Tokens } from "../../src/index.js";
import { Widgets, type Widget } from "./widget.js";
import { createNamespace, installWidgetCrd } from "./support/widget-cluster.js";

/** The part of a kube-apiserver audit event (audit.k8s.io/v1) read here. */
interface AuditEvent {
  verb: string;
  requestURI: string;
  stage: string;
  objectRef?: { resource?: string; namespace?: string };
}

// Metadata-level events of ConfigMap LISTs only, once each (when the response is complete).
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    verbs: ["list"]
    resources:
      - group: ""
        resources: ["configmaps"]
  - level: None
`;

describe("the look for unlabelled owned objects (real API server)", function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), "tessera-audit-"));
  const auditLog = join(dir, "audit.log");
  writeFileSync(join(dir, "policy.yaml"), AUDIT_POLICY);
  const env = useControlPlane({
    apiserverFlags: [`--audit-policy-file=${join(dir, "policy.yaml")}`, `--audit-log-path=${auditLog}`],
  });
  let api: ApiClient;
  before(async () => {
    await installWidgetCrd(env.cp);
    api = new ApiClient(env.cp.kubeConfig, { fieldManager: "tessera-test" });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The LISTs of ConfigMaps without the owner-slot label the apiserver served: their namespace ("" for all). */
  const unlabelledLists = (): string[] =>
    readFileSync(auditLog, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as AuditEvent)
      .filter(
        (e) =>
          e.verb === "list" &&
          e.objectRef?.resource === "configmaps" &&
          new URL(e.requestURI, "https://apiserver").searchParams.get("labelSelector") ===
            `!${OWNER_SLOT_LABEL}`,
      )
      .map((e) => e.objectRef?.namespace ?? "");

  it("lists only the owners' namespaces, not another namespace's unrelated ConfigMaps; an unlabelled child there is found and labelled", async () => {
    const owners = await createNamespace(env.cp, "unl-owners");
    const elsewhere = await createNamespace(env.cp, "unl-elsewhere");
    const ring = await createNamespace(env.cp, "unl-ring");
    const space = new SlotSpace(256);
    const names = ["w0", "w1", "w2", "w3"];
    const widgets = new Map<string, Widget>();
    for (const name of names)
      widgets.set(name, await api.create(Widgets, { metadata: { name, namespace: owners } }));
    const controllerOf = (name: string) => ({
      apiVersion: Widgets.apiVersion,
      kind: Widgets.kind,
      name,
      uid: widgets.get(name)!.metadata!.uid!,
      controller: true,
    });
    // Made before the upgrade: w0's child, without the label, in its owner's namespace.
    await api.create(ConfigMaps, {
      metadata: { name: "cm-w0", namespace: owners, ownerReferences: [controllerOf("w0")] },
      data: { owner: "before" },
    });
    // Another namespace's ConfigMaps, none labelled: unrelated ones, and one naming w0 as its
    // controller (a reference across namespaces, which the garbage collector does not honour).
    for (let i = 0; i < 20; i++)
      await api.create(ConfigMaps, { metadata: { name: `other-${i}`, namespace: elsewhere } });
    await api.create(ConfigMaps, {
      metadata: { name: "cm-w0", namespace: elsewhere, ownerReferences: [controllerOf("w0")] },
    });

    const found: Array<Record<string, unknown>> = [];
    const manager = await Manager.create({
      config: {
        mode: "sharded",
        name: "owned-unlabelled",
        namespace: ring,
        identity: "member-a",
        healthBindAddress: "0",
        metricsBindAddress: "0",
        logLevel: "error",
        leaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
      },
      kubeConfig: env.cp.kubeConfig,
      env: {},
      logger: new JsonLogger({
        level: "info",
        write: (line) => {
          if (line.includes("found once")) found.push(JSON.parse(line) as Record<string, unknown>);
        },
      }),
    });
    const client = manager.get(Tokens.Client);
    manager
      .controller()
      .named("widgets")
      .for(Widgets)
      .owns(ConfigMaps)
      .complete(async (request, ctx) => {
        // Writes wait for the look, so that it reads the child made before the upgrade unlabelled.
        await eventually("the member looked for unlabelled children", () => found.length > 0);
        const widget = ctx.current();
        if (widget === undefined) return;
        await client.apply(
          ConfigMaps,
          { metadata: { name: `cm-${request.name}`, namespace: request.namespace }, data: { owner: "now" } },
          { controller: widget, force: true },
        );
      });
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      assert.ok(await manager.waitForSync(AbortSignal.timeout(60_000)));
      await eventually(
        "every Widget's child labelled with its owner's slot, the one made before the upgrade too",
        async () => {
          const children = await api.list(ConfigMaps, { namespace: owners });
          return names.every((name) => {
            const child = children.find((c) => c.metadata?.name === `cm-${name}`);
            const uid = widgets.get(name)!.metadata!.uid!;
            return child?.metadata?.labels?.[OWNER_SLOT_LABEL] === ownerSlotLabelValue(uid, space);
          });
        },
        30_000,
      );
      // The look: one LIST, of the owners' namespace; it read w0's child and nothing else.
      assert.deepEqual(unlabelledLists(), [owners], "ConfigMaps listed without the label, by namespace");
      assert.equal(found.length, 1);
      assert.equal(found[0]!["namespaces"], 1);
      assert.equal(found[0]!["unlabelled"], 1);
      assert.equal(found[0]!["ownedHere"], 1);
      // The other namespace's ConfigMaps are untouched: still without the label.
      const others = await api.list(ConfigMaps, { namespace: elsewhere });
      assert.equal(others.length, 21);
      assert.ok(others.every((c) => c.metadata?.labels?.[OWNER_SLOT_LABEL] === undefined));
    } finally {
      stop.abort();
      await running;
    }
  });
});
