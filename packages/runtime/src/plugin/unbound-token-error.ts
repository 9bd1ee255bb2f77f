/**
 * A plugin's `static inject` lists a token the manager's container does not
 * bind. Raised by `manager.run` before anything starts, so the author reads
 * which plugin, which position and how to bind it, not the container's own
 * message from deep inside start-up.
 */
export class UnboundTokenError extends Error {
  override readonly name = "UnboundTokenError";
  constructor(
    /** The class whose `inject` list names the token. */
    readonly plugin: string,
    /** The token's position in that list: its constructor parameter's. */
    readonly index: number,
    /** The token's description, or how it is missing. */
    readonly token: string,
  ) {
    super(
      `${plugin}.inject[${index}] (${token}) is bound to nothing in the manager: ` +
        `call manager.provide(token, value) before run() ` +
        `(or register a ContainerModule that binds it)`,
    );
  }
}
