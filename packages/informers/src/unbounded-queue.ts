/**
 * A first-in first-out queue with no capacity limit: amortised O(1) `push`
 * and `shift`, memory proportional to what is held. Backed by a growable ring
 * so a long-lived queue that is drained as it fills never copies its content
 * on every shift; a ring grown by a burst (a whole snapshot's adds at once)
 * is let go once drained. Internal to the package.
 */
export class UnboundedQueue<T> {
  private slots: (T | undefined)[] = new Array<T | undefined>(INITIAL_SLOTS);
  private head = 0;
  private count = 0;

  /** How many items it has room for before it grows (for tests of its memory). */
  get capacity(): number {
    return this.slots.length;
  }

  /** How many items are held. */
  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.slots.length) this.grow();
    this.slots[(this.head + this.count) % this.slots.length] = item;
    this.count++;
  }

  /** The oldest item, removed; `undefined` when empty. */
  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.slots.length;
    this.count--;
    if (this.count === 0) {
      this.head = 0;
      if (this.slots.length > KEPT_SLOTS) this.slots = new Array<T | undefined>(INITIAL_SLOTS);
    }
    return item;
  }

  /** Drops everything, releasing the memory held. */
  clear(): void {
    this.slots = new Array<T | undefined>(INITIAL_SLOTS);
    this.head = 0;
    this.count = 0;
  }

  private grow(): void {
    const bigger = new Array<T | undefined>(this.slots.length * 2);
    for (let i = 0; i < this.count; i++) bigger[i] = this.slots[(this.head + i) % this.slots.length];
    this.slots = bigger;
    this.head = 0;
  }
}

const INITIAL_SLOTS = 16;
/** The largest ring kept once empty: what an informer's runs of 256 keys fill; larger ones came from a burst. */
const KEPT_SLOTS = 1024;
