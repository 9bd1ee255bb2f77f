/**
 * A growable first-in first-out buffer on a power-of-two circular array:
 * O(1) `push` and `shift` without the O(n) of `Array.prototype.shift`.
 * Internal to the package.
 */
export class RingBuffer<T> {
  private slots: (T | undefined)[];
  private head = 0;
  private count = 0;
  private mask: number;

  constructor(initialCapacity = 16) {
    let capacity = 1;
    while (capacity < initialCapacity) capacity <<= 1;
    this.slots = new Array<T | undefined>(capacity).fill(undefined);
    this.mask = capacity - 1;
  }

  get length(): number {
    return this.count;
  }

  push(value: T): void {
    if (this.count === this.slots.length) this.grow();
    this.slots[(this.head + this.count) & this.mask] = value;
    this.count++;
  }

  /** Removes and returns the oldest element, or `undefined` when empty. */
  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const value = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.count--;
    return value;
  }

  /** The oldest element, without removing it. */
  peek(): T | undefined {
    return this.count === 0 ? undefined : this.slots[this.head];
  }

  /** Removes every element. */
  clear(): void {
    this.slots = new Array<T | undefined>(16).fill(undefined);
    this.mask = 15;
    this.head = 0;
    this.count = 0;
  }

  private grow(): void {
    const old = this.slots;
    const next = new Array<T | undefined>(old.length * 2).fill(undefined);
    for (let i = 0; i < this.count; i++) next[i] = old[(this.head + i) & this.mask];
    this.slots = next;
    this.head = 0;
    this.mask = next.length - 1;
  }
}
