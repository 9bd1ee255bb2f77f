import fc from "fast-check";

/**
 * Runs of a fuzz target: its default, chosen so a file takes a second or
 * two in CI, unless `FUZZ_RUNS` says otherwise for a long local run:
 * `FUZZ_RUNS=100000` runs every target that often, `FUZZ_RUNS=20x` twenty
 * times its default.
 */
export function fuzzRuns(defaultRuns: number): number {
  const setting = process.env["FUZZ_RUNS"]?.trim();
  if (!setting) return defaultRuns;
  const factor = /^(\d+(?:\.\d+)?)x$/.exec(setting);
  const runs = factor ? Math.round(defaultRuns * Number(factor[1])) : Number(setting);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`FUZZ_RUNS=${setting} is not a count or a factor like 10x`);
  return runs;
}

/** One run slower than this is taken for a hang in the making (the inputs are small). */
const MAX_RUN_MS = 2_000;
/** A long local run stops here and reports how far it got. */
const MAX_TARGET_MS = 10 * 60_000;

/**
 * Checks `predicate` on values of `arbitrary` and prints one line naming the
 * target and the runs it made, so CI output shows how hard each boundary
 * was fuzzed. Fails with fast-check's report (seed, path, shrunk
 * counterexample) when the predicate throws or one run takes too long.
 */
export function fuzz<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => void,
  defaultRuns: number,
): void {
  const started = performance.now();
  const result = fc.check(
    fc.property(arbitrary, (value) => {
      const t = performance.now();
      predicate(value);
      const ms = performance.now() - t;
      if (ms > MAX_RUN_MS) throw new Error(`one run took ${Math.round(ms)} ms (limit ${MAX_RUN_MS} ms)`);
    }),
    { numRuns: fuzzRuns(defaultRuns), interruptAfterTimeLimit: MAX_TARGET_MS, markInterruptAsFailure: false },
  );
  const ms = Math.round(performance.now() - started);
  console.log(
    `      fuzz ${name}: ${result.numRuns} runs, ${ms} ms${result.interrupted ? " (time limit)" : ""}`,
  );
  if (result.failed) {
    const cause = result.errorInstance instanceof Error ? result.errorInstance : undefined;
    throw new Error(
      `${fc.defaultReportMessage(result)}\nFailure: ${String(cause?.stack ?? result.errorInstance)}`,
    );
  }
}
