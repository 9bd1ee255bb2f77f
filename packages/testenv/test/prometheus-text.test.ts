import { strict as assert } from "node:assert";
import { parsePrometheusText, sumSamples } from "../src/index.js";

describe("parsePrometheusText", () => {
  it("groups samples into typed families, histograms included, and unescapes labels", () => {
    const families = parsePrometheusText(
      [
        "# HELP reconciles_total Total reconciles",
        "# TYPE reconciles_total counter",
        'reconciles_total{controller="a",result="success"} 3',
        'reconciles_total{controller="b",result="success"} 4 1700000000000',
        "# TYPE time_seconds histogram",
        "# UNIT time_seconds s",
        'time_seconds_bucket{le="0.1"} 1',
        'time_seconds_bucket{le="+Inf"} 2',
        "time_seconds_sum 0.3",
        "time_seconds_count 2",
        'odd{path="a\\"b\\\\c"} +Inf',
      ].join("\n"),
    );
    assert.equal(families.get("reconciles_total")?.type, "counter");
    assert.equal(families.get("reconciles_total")?.help, "Total reconciles");
    assert.equal(sumSamples(families, "reconciles_total", { result: "success" }), 7);
    assert.equal(sumSamples(families, "reconciles_total", { controller: "a" }), 3);
    assert.equal(families.get("time_seconds")?.samples.length, 4);
    assert.equal(sumSamples(families, "time_seconds", {}, "time_seconds_count"), 2);
    assert.equal(families.get("odd")?.samples[0]?.labels["path"], 'a"b\\c');
    assert.equal(families.get("odd")?.samples[0]?.value, Infinity);
  });

  it("quotes a line it cannot read", () => {
    assert.throws(
      () => parsePrometheusText("this is not a sample line at all"),
      /not a Prometheus sample line/,
    );
  });
});
