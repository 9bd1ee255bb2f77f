// The main job (scripts/demo.mjs), smaller: 200 Tenants, replicas 3 -> 4 -> 2
// (the removal of two: one SIGKILL, one SIGTERM). It must exit 0, which it
// does only when a fresh LIST shows every Tenant reconciled at its last
// generation, and its summary must say what happened.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const demo = fileURLToPath(new URL("../../../../scripts/demo.mjs", import.meta.url));

describe("the main job (scripts/demo.mjs) with 200 Tenants and 3 -> 4 -> 2 replicas", function () {
  this.timeout(300_000);

  it("reconciles every Tenant at its last generation and says how the slots moved", async () => {
    const child = spawn(process.execPath, [demo, "--objects", "200", "--replicas", "3,4,2"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    assert.equal(code, 0, output);
    assert.match(output, /reconciled at their last generation \(fresh LIST\): 200\/200/);
    assert.match(output, /3 -> 4 \(1 started\): converged in [\d.]+ s, slots moved [\d.]+% \(ideal 25\.0%\)/);
    assert.match(
      output,
      /4 -> 2 \(replica-0 SIGKILL, replica-1 SIGTERM\): converged in [\d.]+ s, slots moved [\d.]+% \(ideal 50\.0%\)/,
    );
    const summary = output.slice(output.indexOf("summary"));
    console.log(
      summary
        .split("\n")
        .map((l) => `      ${l}`)
        .join("\n"),
    );
  });
});
