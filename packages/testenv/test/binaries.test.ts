import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveControlPlaneBinaries, ControlPlaneBinariesNotFoundError } from "../src/index.js";

describe("resolveControlPlaneBinaries", () => {
  it("takes TESSERA_CONTROLPLANE_DIR first and checks both binaries are there", () => {
    const dir = mkdtempSync(join(tmpdir(), "tessera-bin-"));
    writeFileSync(join(dir, "etcd"), "#!/bin/sh\n", { mode: 0o755 });
    assert.throws(
      () => resolveControlPlaneBinaries({ TESSERA_CONTROLPLANE_DIR: dir }),
      (e: Error) => e instanceof ControlPlaneBinariesNotFoundError && /kube-apiserver/.test(e.message),
    );
    writeFileSync(join(dir, "kube-apiserver"), "#!/bin/sh\n", { mode: 0o755 });
    const found = resolveControlPlaneBinaries({
      TESSERA_CONTROLPLANE_DIR: dir,
      KUBEBUILDER_ASSETS: "/nowhere",
    });
    assert.equal(found.source, "TESSERA_CONTROLPLANE_DIR");
    assert.equal(found.etcd, join(dir, "etcd"));
  });

  it("when kube-controller-manager is asked for and missing, says how to build it", () => {
    const dir = mkdtempSync(join(tmpdir(), "tessera-bin-"));
    for (const b of ["etcd", "kube-apiserver"]) writeFileSync(join(dir, b), "#!/bin/sh\n", { mode: 0o755 });
    assert.equal(
      resolveControlPlaneBinaries({ TESSERA_CONTROLPLANE_DIR: dir }).kubeControllerManager,
      undefined,
    );
    assert.throws(
      () => resolveControlPlaneBinaries({ KUBEBUILDER_ASSETS: dir }, { controllerManager: true }),
      (e: Error) =>
        e instanceof ControlPlaneBinariesNotFoundError &&
        e.message.includes(join(dir, "kube-controller-manager")) &&
        /build\.sh --with-controller-manager/.test(e.message),
    );
    writeFileSync(join(dir, "kube-controller-manager"), "#!/bin/sh\n", { mode: 0o755 });
    const found = resolveControlPlaneBinaries({ KUBEBUILDER_ASSETS: dir }, { controllerManager: true });
    assert.equal(found.kubeControllerManager, join(dir, "kube-controller-manager"));
  });

  it("reads KUBEBUILDER_ASSETS in setup-envtest's layout", () => {
    const dir = mkdtempSync(join(tmpdir(), "tessera-envtest-"));
    for (const b of ["etcd", "kube-apiserver", "kubectl"])
      writeFileSync(join(dir, b), "#!/bin/sh\n", { mode: 0o755 });
    assert.equal(resolveControlPlaneBinaries({ KUBEBUILDER_ASSETS: dir }).source, "KUBEBUILDER_ASSETS");
  });

  it("without binaries and without Go, names both routes", () => {
    const cache = mkdtempSync(join(tmpdir(), "tessera-cache-"));
    // PATH holds bash but no go; the cache is empty, so a build is needed.
    const env = { PATH: "/usr/bin/no-go-here:/bin", HOME: cache, TESSERA_CACHE_DIR: cache };
    assert.throws(
      () => resolveControlPlaneBinaries(env),
      (e: Error) =>
        e instanceof ControlPlaneBinariesNotFoundError &&
        /KUBEBUILDER_ASSETS/.test(e.message) &&
        /TESSERA_CONTROLPLANE_DIR/.test(e.message) &&
        /Go/.test(e.message),
    );
  });
});
