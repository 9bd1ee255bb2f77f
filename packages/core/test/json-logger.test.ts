import { strict as assert } from "node:assert";
import { JsonLogger } from "../src/index.js";
import { FakeClock } from "../src/testing/index.js";

describe("JsonLogger", () => {
  const capture = (level?: "debug" | "info" | "warn" | "error") => {
    const lines: string[] = [];
    const clock = new FakeClock();
    const logger = new JsonLogger({
      write: (line) => lines.push(line),
      clock,
      fields: { logger: "op" },
      ...(level ? { level } : {}),
    });
    return { lines, logger, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  };

  it("writes one JSON object per line: ts, level, msg, its own fields, then the line's", () => {
    const { lines, logger, parsed } = capture();
    logger.info("reconciled", { controller: "widget", key: "default/w1" });
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.endsWith("\n"));
    const [entry] = parsed();
    assert.equal(entry!["level"], "info");
    assert.equal(entry!["msg"], "reconciled");
    assert.equal(entry!["logger"], "op");
    assert.equal(entry!["key"], "default/w1");
    assert.match(String(entry!["ts"]), /^\d{4}-\d\d-\d\dT/);
  });

  it("drops lines below its level", () => {
    const { lines, logger } = capture("warn");
    logger.debug("d");
    logger.info("i");
    logger.warn("w");
    logger.error("e");
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as { msg: string }).msg),
      ["w", "e"],
    );
    assert.equal(logger.enabled("info"), false);
  });

  it("writes errors with name, message, stack and cause; survives bigints and cycles", () => {
    const { logger, parsed } = capture();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    const error = new Error("conflict", { cause: new TypeError("inner") });
    logger.error("failed", { error, n: 10n, cyclic });
    const [entry] = parsed();
    const e = entry!["error"] as Record<string, unknown>;
    assert.equal(e["name"], "Error");
    assert.equal(e["message"], "conflict");
    assert.match(String(e["stack"]), /conflict/);
    assert.equal((e["cause"] as Record<string, unknown>)["message"], "inner");
    assert.equal(entry!["n"], "10");
    assert.equal((entry!["cyclic"] as Record<string, unknown>)["self"], "[Circular]");
  });

  it("writes a Secret's data and stringData as a count of keys, wherever it sits", () => {
    const { lines, logger, parsed } = capture();
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db", namespace: "default" },
      type: "Opaque",
      data: { password: Buffer.from("hunter2").toString("base64"), user: "YWRtaW4=" },
      stringData: { token: "hunter2" },
    };
    const listItem = { metadata: { name: "db" }, type: "Opaque", data: { password: "aHVudGVyMg==" } };
    const configMap = { kind: "ConfigMap", metadata: { name: "c" }, data: { colour: "blue" } };
    logger.error("reconcile failed", {
      object: secret,
      error: Object.assign(new Error("bad"), { object: secret, cause: { items: [listItem] } }),
      configMap,
    });
    assert.ok(!lines[0]!.includes("hunter2") && !lines[0]!.includes("aHVudGVyMg=="), lines[0]);
    const [entry] = parsed();
    const object = entry!["object"] as Record<string, unknown>;
    assert.equal(object["data"], "[redacted 2 keys]");
    assert.equal(object["stringData"], "[redacted 1 keys]");
    assert.deepEqual(object["metadata"], { name: "db", namespace: "default" });
    assert.deepEqual((entry!["configMap"] as Record<string, unknown>)["data"], { colour: "blue" });
    assert.equal(secret.data.user, "YWRtaW4=", "the logged object itself must not change");
  });
});
