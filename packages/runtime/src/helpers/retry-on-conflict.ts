import { Backoff, defaultRandom, sleep, SystemClock, type Clock, type RandomSource } from "@tessera/core";
import { ConflictError } from "@tessera/client";

/** Options of {@link retryOnConflict}. */
export interface RetryOnConflictOptions {
  /** Attempts in all; default 5, client-go's `DefaultRetry`. */
  attempts?: number;
  /** First wait, ms (doubling, jittered); default 10, as client-go's. */
  initialMs?: number;
  clock?: Clock;
  random?: RandomSource;
  signal?: AbortSignal;
}

/** Every attempt of a {@link retryOnConflict} lost to a concurrent writer. */
export class ConflictRetriesExhaustedError extends Error {
  override name = "ConflictRetriesExhaustedError";
}

/**
 * client-go's `retry.RetryOnConflict`: runs `attempt` (which must read the
 * object fresh, change it, and write it quoting the resourceVersion it read)
 * again while it fails with a {@link ConflictError}, waiting a short jittered
 * backoff between tries. Any other error is thrown at once. When the attempts
 * run out the error names `what` (e.g. `widgets.example.com default/w1`) and
 * keeps the last conflict as its cause.
 *
 * ```ts
 * await retryOnConflict(`widgets ${ns}/${name}`, async () => {
 *   const fresh = await api.get(Widgets, { name, namespace: ns });
 *   await api.updateStatus(Widgets, { ...fresh!, status: { ...fresh!.status, count: (fresh!.status?.count ?? 0) + 1 } });
 * });
 * ```
 */
export async function retryOnConflict<T>(
  what: string,
  attempt: () => Promise<T>,
  options: RetryOnConflictOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 5;
  const clock = options.clock ?? new SystemClock();
  const backoff = new Backoff(clock, options.random ?? defaultRandom, {
    initialMs: options.initialMs ?? 10,
    factor: 2,
    maxMs: 1_000,
    jitter: 0.1,
  });
  let last: ConflictError | undefined;
  for (let i = 0; i < attempts; i++) {
    options.signal?.throwIfAborted();
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      last = error;
      if (i + 1 < attempts) await sleep(clock, backoff.next(), options.signal);
    }
  }
  throw new ConflictRetriesExhaustedError(
    `${what}: still conflicting after ${attempts} attempts (another writer keeps changing it): ${last?.message ?? ""}`,
    { cause: last },
  );
}
