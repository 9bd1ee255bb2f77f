/**
 * What was wrong with a controller's declaration: every mistake the builder
 * collected, reported at once when the controller is completed
 * (controller-runtime's builder returns its errors at `Complete` the same way).
 */
export class BuilderError extends Error {
  override readonly name = "BuilderError";
  constructor(
    /** The controller's name, or the kind it was for when it had none. */
    readonly controller: string,
    /** One line per mistake, each saying how to fix it. */
    readonly problems: readonly string[],
  ) {
    super(`controller "${controller}" is not valid:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}
