import { generate } from "@tessera/cli";

// What `tessera generate --check` does, from a script: nothing is written.
const { changed } = await generate({ dir: process.cwd(), check: true });
if (changed.length > 0) {
  console.error(`stale generated files: ${changed.join(", ")}; run tessera generate`);
  process.exitCode = 1;
}
