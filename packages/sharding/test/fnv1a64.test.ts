import { strict as assert } from "node:assert";
import fc from "fast-check";
import { fnv1a64, fnv1a64Hex, fnv1a64Words } from "../src/ranges.js";

// Vectors from Go's hash/fnv New64a over []byte(s), the function the API server's
// k8s.io/apimachinery/pkg/sharding.HashField uses.
const GO_VECTORS: ReadonlyArray<readonly [string, string]> = [
  ["", "cbf29ce484222325"],
  ["a", "af63dc4c8601ec8c"],
  ["foobar", "85944171f73967e8"],
  ["default", "ebada5168620c5fe"],
  ["kube-system", "df65c7bc1d82b35e"],
  ["test-uid-12345", "d4c53b72f9287c28"],
  ["aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "93754b7248a00eb9"],
  ["6f1b2c1e-3a4d-4f5e-9a8b-7c6d5e4f3a2b", "712e9d902746bcdb"],
  ["00000000-0000-0000-0000-000000000000", "7c384c6218f299f1"],
  ["héllo", "a35ff71f960240e0"],
  ["日本語", "ee9ee2b5c854ef87"],
  ["emoji-😀", "1d09ad82be625e1d"],
  ["\u00ff\u0100\u07ff\u0800\uffff", "cdef4def7335400a"],
];

/** A slow, obviously correct BigInt FNV-1a 64 over Node's own UTF-8 encoder. */
function reference(s: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(s, "utf8")) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

describe("fnv1a64", () => {
  for (const [input, hex] of GO_VECTORS) {
    it(`hashes ${JSON.stringify(input)} to ${hex} like Go's hash/fnv`, () => {
      assert.equal(fnv1a64Hex(input), hex);
      assert.equal(fnv1a64(input), BigInt("0x" + hex));
      const { hi, lo } = fnv1a64Words(input);
      assert.equal(hi, parseInt(hex.slice(0, 8), 16));
      assert.equal(lo, parseInt(hex.slice(8), 16));
    });
  }

  it("encodes a lone surrogate as U+FFFD, as the server's JSON decoder does", () => {
    assert.equal(fnv1a64("x\ud800y"), fnv1a64("x\ufffdy"));
    assert.equal(fnv1a64("\udc00"), fnv1a64("\ufffd"));
  });

  it("agrees with a BigInt reference on any string", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string(), fc.uuid()), (s) => {
        assert.equal(fnv1a64(s), reference(s));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps both halves unsigned 32-bit integers", () => {
    fc.assert(
      fc.property(fc.uuid(), (s) => {
        const { hi, lo } = fnv1a64Words(s);
        assert.ok(Number.isInteger(hi) && hi >= 0 && hi < 2 ** 32);
        assert.ok(Number.isInteger(lo) && lo >= 0 && lo < 2 ** 32);
      }),
    );
  });
});
