import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Paths of the control-plane binaries. */
export interface ControlPlaneBinaries {
  kubeApiserver: string;
  etcd: string;
  /** Present when it was asked for (see {@link ResolveOptions.controllerManager}) or found beside the others. */
  kubeControllerManager?: string;
  /**
   * kubectl of the same version, when found beside the others: built with
   * `build.sh --with-kubectl` (or `TESSERA_WITH_KUBECTL=1` when the build
   * route is taken). Tests that run kubectl skip without it, except under
   * the test command, which builds it and fails when it is missing.
   */
  kubectl?: string;
  /** Where they came from: "TESSERA_CONTROLPLANE_DIR", "KUBEBUILDER_ASSETS" or "build". */
  source: string;
}

/** Raised when no binaries can be found or built. */
export class ControlPlaneBinariesNotFoundError extends Error {
  override name = "ControlPlaneBinariesNotFoundError";
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What {@link resolveControlPlaneBinaries} must find. */
export interface ResolveOptions {
  /** Also require kube-controller-manager (building it when the build route is taken). */
  controllerManager?: boolean;
}

function fromDir(dir: string, source: string, opts: ResolveOptions): ControlPlaneBinaries {
  const kubeApiserver = join(dir, "kube-apiserver");
  const etcd = join(dir, "etcd");
  const kubeControllerManager = join(dir, "kube-controller-manager");
  const missing = [kubeApiserver, etcd].filter((p) => !executable(p));
  if (missing.length) {
    throw new ControlPlaneBinariesNotFoundError(
      `${source}=${dir} is set but ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} missing or not executable; it must hold kube-apiserver and etcd`,
    );
  }
  const hasKcm = executable(kubeControllerManager);
  if (opts.controllerManager && !hasKcm) {
    throw new ControlPlaneBinariesNotFoundError(
      `the control plane was asked to run kube-controller-manager, but ${kubeControllerManager} ` +
        `(from ${source}=${dir}) is missing or not executable. setup-envtest does not ship it; build it ` +
        `at the pinned version with \`bash ${buildScriptPathOrName()} --with-controller-manager\` ` +
        `(or \`npm run controlplane -- --with-controller-manager\` in the Tessera repository), which prints ` +
        `the directory to use, or copy a kube-controller-manager of the same version into ${dir}`,
    );
  }
  const kubectl = join(dir, "kubectl");
  return {
    kubeApiserver,
    etcd,
    ...(hasKcm ? { kubeControllerManager } : {}),
    ...(executable(kubectl) ? { kubectl } : {}),
    source,
  };
}

function buildScriptPathOrName(): string {
  try {
    return buildScriptPath();
  } catch {
    return "@tessera/testenv/tools/controlplane/build.sh";
  }
}

/** The build script that ships with this package. */
export function buildScriptPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // src/ in the source tree, dist/src/ once compiled.
  for (const up of ["..", "../.."]) {
    const candidate = resolve(here, up, "tools/controlplane/build.sh");
    try {
      accessSync(candidate, constants.R_OK);
      return candidate;
    } catch {
      // try the next layout
    }
  }
  throw new ControlPlaneBinariesNotFoundError("tools/controlplane/build.sh is missing from @tessera/testenv");
}

/**
 * Finds kube-apiserver and etcd (and kube-controller-manager when asked):
 * `TESSERA_CONTROLPLANE_DIR` first, then `KUBEBUILDER_ASSETS` (setup-envtest's
 * layout), then the cached build from the Go module proxy, building it (once,
 * under a lock) when absent.
 */
export function resolveControlPlaneBinaries(
  env: NodeJS.ProcessEnv = process.env,
  opts: ResolveOptions = {},
): ControlPlaneBinaries {
  if (env.TESSERA_CONTROLPLANE_DIR)
    return fromDir(env.TESSERA_CONTROLPLANE_DIR, "TESSERA_CONTROLPLANE_DIR", opts);
  if (env.KUBEBUILDER_ASSETS) return fromDir(env.KUBEBUILDER_ASSETS, "KUBEBUILDER_ASSETS", opts);
  const args = [buildScriptPath(), ...(opts.controllerManager ? ["--with-controller-manager"] : [])];
  const result = spawnSync("bash", args, {
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const dir = result.stdout?.trim().split("\n").pop();
  if (result.status === 0 && dir) return fromDir(dir, "build", opts);
  if (result.status === 3 || result.error) {
    throw new ControlPlaneBinariesNotFoundError(
      "no kube-apiserver/etcd binaries found and Go is not installed to build them. " +
        "Either install Go (the binaries are then built once from the Go module proxy), " +
        "or set KUBEBUILDER_ASSETS to a directory laid out by setup-envtest, " +
        "or set TESSERA_CONTROLPLANE_DIR to a directory holding kube-apiserver and etcd" +
        (opts.controllerManager ? " and kube-controller-manager." : "."),
    );
  }
  throw new ControlPlaneBinariesNotFoundError(
    `building the control plane with ${buildScriptPath()} failed (exit ${result.status}); see its output above`,
  );
}
