/**
 * A point a run reaches at most once (a member Lease taken, a ring joined),
 * awaited the way `waitForSync` is: {@link Milestone.wait} resolves `true`
 * once it is reached, `false` when it is missed (the run ended without
 * reaching it) or the caller's signal aborts first; it never rejects.
 */
export class Milestone {
  private outcome: boolean | undefined;
  private settle: (reached: boolean) => void = () => {};
  private readonly settled = new Promise<boolean>((resolve) => (this.settle = resolve));

  /** Whether it was reached (so far). */
  get reached(): boolean {
    return this.outcome === true;
  }

  /** Marks it reached; nothing once it was reached or missed. */
  reach(): void {
    this.decide(true);
  }

  /** Marks it missed (the run ended first); nothing once it was reached or missed. */
  miss(): void {
    this.decide(false);
  }

  /** `true` once reached, `false` once missed or when `signal` aborts first. Never rejects. */
  wait(signal?: AbortSignal): Promise<boolean> {
    if (this.outcome !== undefined) return Promise.resolve(this.outcome);
    if (!signal) return this.settled;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => resolve(false);
      signal.addEventListener("abort", onAbort, { once: true });
      void this.settled.then((reached) => {
        signal.removeEventListener("abort", onAbort);
        resolve(reached);
      });
    });
  }

  private decide(reached: boolean): void {
    if (this.outcome !== undefined) return;
    this.outcome = reached;
    this.settle(reached);
  }
}
