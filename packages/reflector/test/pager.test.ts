import { strict as assert } from "node:assert";
import { choosePageSize, DEFAULT_PAGE_SIZE } from "../src/index.js";

describe("choosePageSize (the pager decision table)", () => {
  const table: [string, number | undefined, boolean, string, number][] = [
    // description, user page size, paginated before, resourceVersion, expected limit
    ["first list at RV 0", undefined, false, "0", DEFAULT_PAGE_SIZE],
    ["consistent read (RV empty)", undefined, false, "", DEFAULT_PAGE_SIZE],
    ["relist at a set RV: no limit, the watch cache serves it", undefined, false, "12345", 0],
    [
      "relist at a set RV after a paginated RV-0 list: keep paging",
      undefined,
      true,
      "12345",
      DEFAULT_PAGE_SIZE,
    ],
    ["RV 0 after a paginated RV-0 list", undefined, true, "0", DEFAULT_PAGE_SIZE],
    ["user page size at RV 0", 50, false, "0", 50],
    ["user page size at a set RV wins over the no-limit rule", 50, false, "12345", 50],
    ["user page size wins over a paginated result", 2000, true, "12345", 2000],
    ["a zero user page size is no user page size", 0, false, "12345", 0],
  ];
  for (const [what, userPageSize, paginatedResult, resourceVersion, expected] of table) {
    it(`${what} -> ${expected === 0 ? "no limit" : `limit ${expected}`}`, () => {
      assert.equal(choosePageSize({ userPageSize, paginatedResult, resourceVersion }), expected);
    });
  }
});
