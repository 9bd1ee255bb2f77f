// The informer protocol's output side (bench/peers/README.md): one JSON
// object per line on stdout, monotonic timestamps comparable across
// processes, and the exits every contender shares.

/** Writes one protocol line. */
export function emit(/** @type {Record<string, unknown>} */ line) {
  process.stdout.write(JSON.stringify(line) + "\n");
}

/** CLOCK_MONOTONIC in µs (Node's hrtime reads it on Linux), as the Go and Rust contenders read it. */
export function monotonicMicros() {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The highest metadata.resourceVersion among `objects`, as a decimal string ("" for none). */
export function highestResourceVersion(/** @type {{ metadata?: { resourceVersion?: string } }[]} */ objects) {
  let max = 0n;
  for (const o of objects) {
    const rv = o.metadata?.resourceVersion;
    if (rv && BigInt(rv) > max) max = BigInt(rv);
  }
  return max === 0n ? "" : String(max);
}

/** Exit code 3 with the reason: this contender cannot do what it was asked. */
export function unsupported(/** @type {string} */ reason) {
  process.stderr.write(`not supported: ${reason}\n`);
  process.exit(3);
}

/** On SIGTERM or SIGINT: run `stop`, then exit 0. */
export function exitOnSignal(/** @type {() => void} */ stop) {
  const exit = () => {
    stop();
    process.exit(0);
  };
  process.once("SIGTERM", exit);
  process.once("SIGINT", exit);
}
