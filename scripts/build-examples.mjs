// Builds every example under examples/ as its own users would: `tessera
// generate --check` (its generated files must be current), then its own tsc.
// Their tests then run in the main test command with the packages' tests.
// Usage: node scripts/build-examples.mjs   (after npm run build)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "packages/cli/dist/src/bin.js");
const tsc = join(root, "node_modules/typescript/bin/tsc");
let failed = false;
for (const name of readdirSync(join(root, "examples")).sort()) {
  const dir = join(root, "examples", name);
  if (!existsSync(join(dir, "tessera.json"))) continue;
  for (const [what, args] of [
    ["tessera generate --check", [cli, "generate", "--check", "--dir", dir]],
    ["tsc", [tsc, "-p", join(dir, "tsconfig.json")]],
  ]) {
    const run = spawnSync(process.execPath, args, { cwd: dir, stdio: "inherit" });
    if (run.status !== 0) {
      console.error(`examples/${name}: ${what} failed`);
      failed = true;
      break;
    }
  }
}
process.exitCode = failed ? 1 : 0;
