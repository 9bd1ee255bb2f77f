import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { DecisionCache } from "../src/server.js";

describe("DecisionCache", () => {
  it("answers a decision until its own TTL has passed, then forgets it", async () => {
    const clock = new FakeClock();
    const cache = new DecisionCache<boolean>({ clock });
    cache.set("allowed", true, 300_000);
    cache.set("denied", false, 30_000);
    await clock.advance(29_999);
    assert.equal(cache.get("allowed"), true);
    assert.equal(cache.get("denied"), false);
    await clock.advance(1);
    assert.equal(cache.get("denied"), undefined, "a deny lives 30 s");
    assert.equal(cache.get("allowed"), true);
    await clock.advance(270_000);
    assert.equal(cache.get("allowed"), undefined, "an allow lives 5 min");
    assert.equal(cache.size, 0);
  });

  it("a new decision replaces the old one and its expiry; a TTL of 0 keeps nothing", async () => {
    const clock = new FakeClock();
    const cache = new DecisionCache<string>({ clock });
    cache.set("k", "deny", 10_000);
    await clock.advance(5_000);
    cache.set("k", "allow", 10_000);
    await clock.advance(9_000);
    assert.equal(cache.get("k"), "allow");
    cache.set("k", "gone", 0);
    assert.equal(cache.get("k"), undefined);
  });

  it("holds at most maxEntries: expired entries go first, then the oldest", async () => {
    const clock = new FakeClock();
    const cache = new DecisionCache<number>({ clock, maxEntries: 2 });
    cache.set("short", 1, 1_000);
    cache.set("a", 2, 60_000);
    await clock.advance(1_000);
    cache.set("b", 3, 60_000);
    assert.deepEqual([cache.get("a"), cache.get("b"), cache.size], [2, 3, 2], "the expired one made room");
    cache.set("c", 4, 60_000);
    assert.equal(cache.get("a"), undefined, "the oldest made room");
    assert.deepEqual([cache.get("b"), cache.get("c")], [3, 4]);
    assert.throws(
      () => new DecisionCache({ clock, maxEntries: 0 }),
      /maxEntries must be a positive integer, got 0/,
    );
  });
});
