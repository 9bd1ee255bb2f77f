/**
 * @tessera/core/testing/fuzz: property-based fuzzing with fast-check for the
 * boundaries where outside input enters (a decoder, a parser, a
 * configuration), as Tessera's own fuzz tests run it: each target prints
 * the runs it made, `FUZZ_RUNS` raises them for a long local run, and a run
 * that takes too long counts as a failure (a hang in the making). Needs
 * `fast-check` installed (an optional peer dependency).
 */
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

/** {@link fuzz} for a predicate that awaits (one run drives a member on a fake clock). */
export async function fuzzAsync<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  defaultRuns: number,
): Promise<void> {
  const started = performance.now();
  const result = await fc.check(fc.asyncProperty(arbitrary, predicate), {
    numRuns: fuzzRuns(defaultRuns),
    // Async runs can be bounded for real: a run that never settles fails here, not at mocha's timeout.
    timeout: MAX_RUN_MS,
    interruptAfterTimeLimit: MAX_TARGET_MS,
    markInterruptAsFailure: false,
  });
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
