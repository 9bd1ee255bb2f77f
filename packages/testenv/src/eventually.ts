/**
 * Waits until `done()` holds, polling every 50 ms, and throws
 * `gave up waiting: <what>` after `limitMs` of real time. For integration
 * tests against the real API server, where a condition holds "soon": the
 * limit is a give-up point, never an assertion on speed.
 */
export async function eventually(
  what: string,
  done: () => boolean | Promise<boolean>,
  limitMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
