import { toError } from "@tessera/core";

/** Exit code of an operator whose configuration is invalid (2, as a kubebuilder `main.go` exits on bad flags). */
export const EXIT_INVALID_CONFIG = 2;

/** Options of {@link runMain}; the defaults are the process's. */
export interface RunMainOptions {
  /** Default `process`. */
  process?: Pick<NodeJS.Process, "once" | "exit" | "removeListener"> & {
    exitCode?: number | string | undefined;
  };
  /** Where the last error is written. Default `console.error`. */
  report?: (message: string) => void;
}

/**
 * An operator's entry point: runs `main` with a signal that aborts on the
 * first SIGTERM or SIGINT (graceful shutdown: in-flight reconciles finish,
 * slots and Leases are handed back); a second signal exits at once with code
 * 130 (SIGINT) or 143 (SIGTERM). Exits 0 when `main` resolves, 2 when it
 * fails with an error that has `exitCode: 2` (invalid configuration), else 1,
 * writing the error first.
 *
 * ```ts
 * await runMain(async (signal) => {
 *   const manager = await Manager.create({ config: { name: "widgets" } });
 *   manager.register(WidgetReconciler);
 *   await manager.run(signal);
 * });
 * ```
 */
export async function runMain(
  main: (signal: AbortSignal) => Promise<void>,
  options: RunMainOptions = {},
): Promise<void> {
  const proc = options.process ?? process;
  const report = options.report ?? ((message: string) => console.error(message));
  const shutdown = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (shutdown.signal.aborted) {
      report(`received ${name} again: exiting without waiting`);
      proc.exit(name === "SIGINT" ? 130 : 143);
      return;
    }
    shutdown.abort(new Error(`received ${name}`));
    // Listen again for the second one.
    proc.once(name, () => onSignal(name));
  };
  const onTerm = () => onSignal("SIGTERM");
  const onInt = () => onSignal("SIGINT");
  proc.once("SIGTERM", onTerm);
  proc.once("SIGINT", onInt);
  let code = 0;
  try {
    await main(shutdown.signal);
  } catch (thrown) {
    const error = toError(thrown);
    const exitCode = (error as { exitCode?: unknown }).exitCode;
    code = exitCode === EXIT_INVALID_CONFIG ? EXIT_INVALID_CONFIG : 1;
    report(error.stack && code !== EXIT_INVALID_CONFIG ? error.stack : error.message);
  } finally {
    proc.removeListener("SIGTERM", onTerm);
    proc.removeListener("SIGINT", onInt);
  }
  proc.exit(code);
}
