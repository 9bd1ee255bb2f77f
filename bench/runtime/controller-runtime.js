// Builds the controller-runtime contender (go/main.go) into .build/ with the
// machine's Go toolchain and modules from the Go module proxy; the build is
// cached by Go, so later runs take a second. Returns its command, or
// undefined (with a note) when there is no Go on PATH.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export function controllerRuntimeReplica() {
  const dir = fileURLToPath(new URL("go/", import.meta.url));
  const binary = fileURLToPath(new URL(".build/controller-runtime-replica", import.meta.url));
  if (spawnSync("go", ["version"]).status !== 0) {
    console.log("no Go toolchain on PATH: skipping the controller-runtime contender");
    return undefined;
  }
  console.log("building the controller-runtime contender (go build) ...");
  const build = spawnSync("go", ["build", "-o", binary, "."], {
    cwd: dir,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, GOFLAGS: "-mod=mod" },
  });
  if (build.status !== 0) throw new Error(`go build of ${dir} failed (${build.status})`);
  return binary;
}
