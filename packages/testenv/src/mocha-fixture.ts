import { basename } from "node:path";
import { ControlPlane, type ControlPlaneOptions } from "./control-plane.js";

/**
 * Registers mocha hooks that start a {@link ControlPlane} before the suite and
 * stop it after; when any test in the suite fails, the logs of etcd,
 * kube-apiserver (and kube-controller-manager, when it runs) are kept and
 * their paths printed.
 *
 * ```ts
 * describe("my controller", function () {
 *   const env = useControlPlane();
 *   it("works", async () => { env.cp.kubeConfig; });
 * });
 * ```
 */
export function useControlPlane(options: ControlPlaneOptions = {}): { cp: ControlPlane } {
  const holder = { cp: new ControlPlane(options) };
  let failed = false;
  before(async function () {
    this.timeout(30 * 60_000); // a first run may build the binaries
    await holder.cp.start();
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed") failed = true;
  });
  after(async function () {
    const names = holder.cp.logFiles.map((f) => basename(f)).join(", ");
    const kept = await holder.cp.stop({ keepLogs: failed });
    if (kept) console.log(`    control-plane logs kept in ${kept} (${names})`);
  });
  return holder;
}
