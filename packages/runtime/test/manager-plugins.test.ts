import { strict as assert } from "node:assert";
import { KubeConfig } from "@kubernetes/client-node";
import { silentLogger, type Clock } from "@tessera/core";
import { Manager, token, Tokens, type ManagedRunnable } from "../src/index.js";
import { UnboundTokenError } from "../src/controller.js";

/** A cluster never contacted: these managers run no controller, so nothing talks to it. */
function unusedCluster(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "unused", server: "https://127.0.0.1:9" }],
    users: [{ name: "unused", token: "unused" }],
    contexts: [{ name: "unused", cluster: "unused", user: "unused" }],
    currentContext: "unused",
  });
  return kubeConfig;
}

const newManager = () =>
  Manager.create({
    kubeConfig: unusedCluster(),
    env: {},
    logger: silentLogger,
    config: { name: "plugins-test", healthBindAddress: "0", metricsBindAddress: "0" },
  });

interface Ledger {
  readonly entries: string[];
}
const LedgerToken = token<Ledger>("test.Ledger");

/** Writes to the ledger it was given, once running: proof of what was injected. */
class Auditor implements ManagedRunnable {
  static readonly inject = [Tokens.Clock, LedgerToken] as const;
  readonly needsLeader = false;
  constructor(
    private readonly clock: Clock,
    private readonly ledger: Ledger,
  ) {}
  async run(signal: AbortSignal): Promise<void> {
    this.ledger.entries.push(`started at ${this.clock.now() >= 0 ? "a time" : "no time"}`);
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  }
}

describe("Manager plugins and their tokens", () => {
  it("provide binds an author's token, and a plugin gets the value", async () => {
    const manager = await newManager();
    const ledger: Ledger = { entries: [] };
    manager.provide(LedgerToken, ledger).register(Auditor);
    assert.equal(manager.get(LedgerToken), ledger);
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    assert.equal(await manager.waitForSync(), true);
    stop.abort();
    await running;
    assert.deepEqual(ledger.entries, ["started at a time"], "the runnable ran with the provided ledger");
  });

  it("an unbound token fails run before anything starts, naming the plugin, the position and the fix", async () => {
    const manager = await newManager();
    manager.register(Auditor);
    const stop = new AbortController();
    await assert.rejects(manager.run(stop.signal), (error: unknown) => {
      assert.ok(error instanceof UnboundTokenError, `an UnboundTokenError, not ${String(error)}`);
      assert.equal(error.plugin, "Auditor");
      assert.equal(error.index, 1);
      assert.match(error.message, /^Auditor\.inject\[1\] \(test\.Ledger\) is bound to nothing/);
      assert.match(error.message, /manager\.provide\(token, value\) before run\(\)/);
      return true;
    });
    assert.equal(manager.hasSynced(), false, "nothing started");
    // Nothing started, so the author can still bind it and run.
    const ledger: Ledger = { entries: [] };
    manager.provide(LedgerToken, ledger);
    const running = manager.run(stop.signal);
    assert.equal(await manager.waitForSync(), true);
    stop.abort();
    await running;
    assert.equal(ledger.entries.length, 1);
  });

  it("provide refuses a token bound already and points at rebind", async () => {
    const manager = await newManager();
    assert.throws(
      () => manager.provide(Tokens.Clock, manager.get(Tokens.Clock)),
      /manager\.provide\(tessera\.Clock\): the token is bound already; use manager\.rebind\(token, value\)/,
    );
    manager.provide(LedgerToken, { entries: [] });
    assert.throws(() => manager.provide(LedgerToken, { entries: [] }), /bound already/);
  });
});
