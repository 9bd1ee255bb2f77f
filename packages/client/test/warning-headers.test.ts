import { strict as assert } from "node:assert";
import { parseWarningHeaders } from "../src/index.js";

describe("parseWarningHeaders", () => {
  it("reads the API server's 299 warnings, several per header or several headers, unescaping quotes", () => {
    assert.deepEqual(
      parseWarningHeaders([
        '299 - "12 replicas is more than a Gizmo needs"',
        '299 - "a \\"quoted\\" word", 299 - "second, with a comma"',
      ]),
      ["12 replicas is more than a Gizmo needs", 'a "quoted" word', "second, with a comma"],
    );
  });

  it("keeps a value of another form whole, and skips empty ones", () => {
    assert.deepEqual(parseWarningHeaders(["something odd", " "]), ["something odd"]);
  });
});
