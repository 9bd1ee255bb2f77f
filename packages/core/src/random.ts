/**
 * A source of uniformly distributed numbers in [0, 1), like `Math.random`.
 * Injected wherever Tessera jitters (backoff, watch timeouts, lease retries,
 * resync buckets), so that a test can pin it.
 */
export type RandomSource = () => number;

/** `Math.random`: the default {@link RandomSource}. */
export const defaultRandom: RandomSource = () => Math.random();
