import { strict as assert } from "node:assert";
import { prettyLogLine } from "../src/index.js";

describe("tessera dev: pretty-printed logs", () => {
  it("shows time, level, message and fields of a JSON line; leaves other lines alone", () => {
    const line = JSON.stringify({
      ts: "2026-12-04T04:14:08.123Z",
      level: "warn",
      msg: "watch failed",
      resource: "widgets",
      error: "connection reset",
      stack: "Error: ...",
    });
    assert.equal(
      prettyLogLine(line, false),
      '04:14:08 WARN  watch failed resource=widgets error="connection reset"',
    );
    assert.equal(prettyLogLine("plain text from a dependency", false), "plain text from a dependency");
    assert.equal(prettyLogLine("[1,2]", false), "[1,2]");
    assert.ok(prettyLogLine(line, true).includes("\u001b[33mWARN"), "warn is yellow on a terminal");
  });
});
