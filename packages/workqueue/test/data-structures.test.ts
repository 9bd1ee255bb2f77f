import { strict as assert } from "node:assert";
import fc from "fast-check";
import { MinHeap } from "@tessera/core";
import { RingBuffer } from "../src/ring-buffer.js";

describe("internal data structures", () => {
  it("RingBuffer behaves like an array used as a FIFO", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer(), fc.constant<"shift">("shift")), { maxLength: 300 }),
        (ops) => {
          const ring = new RingBuffer<number>(2);
          const reference: number[] = [];
          for (const op of ops) {
            if (op === "shift") assert.equal(ring.shift(), reference.shift());
            else {
              ring.push(op);
              reference.push(op);
            }
            assert.equal(ring.length, reference.length);
            assert.equal(ring.peek(), reference[0]);
          }
        },
      ),
    );
  });

  it("MinHeap pops in sorted order", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer(), fc.constant<"pop">("pop")), { maxLength: 300 }), (ops) => {
        const heap = new MinHeap<number>((a, b) => a < b);
        const reference: number[] = [];
        for (const op of ops) {
          if (op === "pop") {
            reference.sort((a, b) => a - b);
            assert.equal(heap.pop(), reference.shift());
          } else {
            heap.push(op);
            reference.push(op);
          }
          assert.equal(heap.size, reference.length);
        }
      }),
    );
  });
});
