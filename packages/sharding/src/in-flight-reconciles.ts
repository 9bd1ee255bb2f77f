/**
 * The reconciles a member has running, with the slot of each (`undefined`:
 * unknown): what a member's `onAssignment` waits on before it acknowledges
 * that it gave slots up, so a slot moves only once its reconciles here ended.
 */
export class InFlightReconciles {
  private readonly running = new Set<{ slot: number | undefined; ended: Promise<void> }>();

  get size(): number {
    return this.running.size;
  }

  /** Records that a reconcile of an object in `slot` began; call the returned function when it ends. */
  begin(slot: number | undefined): () => void {
    let end!: () => void;
    const entry = { slot, ended: new Promise<void>((resolve) => (end = resolve)) };
    this.running.add(entry);
    return () => {
      this.running.delete(entry);
      end();
    };
  }

  /**
   * Resolves once every reconcile running now on one of `slots` has ended;
   * a reconcile whose slot is unknown counts as on every slot.
   */
  async settledFor(slots: ReadonlySet<number>): Promise<void> {
    if (slots.size === 0) return;
    const waits = [...this.running]
      .filter((r) => r.slot === undefined || slots.has(r.slot))
      .map((r) => r.ended);
    await Promise.all(waits);
  }
}
