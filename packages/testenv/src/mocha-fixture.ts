import { ControlPlane, type ControlPlaneOptions } from "./control-plane.js";

/**
 * Registers mocha hooks that start a {@link ControlPlane} before the suite and
 * stop it after; when any test in the suite fails, the etcd and
 * kube-apiserver logs are kept and their paths printed.
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
    const kept = await holder.cp.stop({ keepLogs: failed });
    if (kept) console.log(`    control-plane logs kept in ${kept} (etcd.log, kube-apiserver.log)`);
  });
  return holder;
}
