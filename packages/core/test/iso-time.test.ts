import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { isoTime } from "../src/index.js";

describe("isoTime", () => {
  it("writes what toISOString writes, for times across years 0 to 9999", () => {
    const first = Date.UTC(2000, 0, 1) - 2000 * 365.2425 * 86_400_000;
    const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const times = [
      0,
      -1,
      1,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999), // a leap day of a year divisible by 400
      Date.UTC(1900, 1, 28, 12), // 1900 is not a leap year
      Date.UTC(1900, 2, 1),
      Date.UTC(2026, 11, 5, 10, 0, 0, 7),
      new Date("0000-01-01T00:00:00.000Z").getTime(),
      new Date("0099-12-31T23:59:59.090Z").getTime(),
      new Date("0999-06-15T08:05:03.100Z").getTime(),
      last,
    ];
    // A fixed seed: the same times on every run.
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) times.push(Math.floor(first + random() * (last - first)));
    for (const t of times) assert.equal(isoTime(t), new Date(t).toISOString(), `at ${t}`);
  });

  it("takes a Date as well as milliseconds", () => {
    const date = new Date(Date.UTC(2026, 11, 5, 10, 0, 0, 123));
    assert.equal(isoTime(date), "2026-12-05T10:00:00.123Z");
  });

  it("leaves years past 9999 and before 0 to toISOString, and throws for an invalid time as it does", () => {
    const far = Date.UTC(10_000, 0, 1);
    assert.equal(isoTime(far), "+010000-01-01T00:00:00.000Z");
    const before = new Date("-000001-12-31T23:59:59.999Z").getTime();
    assert.equal(isoTime(before), "-000001-12-31T23:59:59.999Z");
    assert.throws(() => isoTime(Number.NaN), RangeError);
    assert.throws(() => isoTime(new Date("not a time")), RangeError);
  });

  it("does not set up V8's time-zone cache, which reads ICU's data", () => {
    // Measured through the node binary's pages the process maps in: toISOString reads
    // about 1.2 MiB more of them on first use than isoTime does.
    const touched = (expression: string) =>
      Number(
        execFileSync(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `import { isoTime } from "@tessera/core";
const file = () => Number(/RssFile:\\s+(\\d+)/.exec(process.getBuiltinModule("fs").readFileSync("/proc/self/status", "utf8"))[1]);
isoTime(0); const before = file(); ${expression}; console.log(file() - before);`,
          ],
          { encoding: "utf8" },
        ),
      );
    const viaIsoTime = touched("isoTime(Date.now())");
    const viaToIsoString = touched("new Date().toISOString()");
    assert.ok(
      viaToIsoString - viaIsoTime >= 512,
      `toISOString read ${viaToIsoString} KiB of the binary, isoTime ${viaIsoTime} KiB: isoTime should read less`,
    );
  });
});
