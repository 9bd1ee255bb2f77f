/**
 * A source of uniformly distributed numbers in [0, 1), like `Math.random`.
 * Injected wherever the reflector jitters (backoff, watch timeouts), so that
 * tests can pin it.
 */
export type RandomSource = () => number;
