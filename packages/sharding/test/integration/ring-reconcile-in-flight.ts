/** The reconciles a member has running, with the slot of each. */
export class InFlightReconciles {
  private readonly running = new Set<{ slot: number; ended: Promise<void> }>();

  get size(): number {
    return this.running.size;
  }

  /** Records that a reconcile of an object in `slot` began; call the returned function when it ends. */
  begin(slot: number): () => void {
    let end!: () => void;
    const entry = { slot, ended: new Promise<void>((resolve) => (end = resolve)) };
    this.running.add(entry);
    return () => {
      this.running.delete(entry);
      end();
    };
  }

  /** Resolves once every reconcile running now on one of `slots` has ended. */
  async settledFor(slots: ReadonlySet<number>): Promise<void> {
    const waits = [...this.running].filter((r) => slots.has(r.slot)).map((r) => r.ended);
    await Promise.all(waits);
  }
}
