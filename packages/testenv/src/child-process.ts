import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, createWriteStream, readFileSync } from "node:fs";

/** A control-plane process whose output goes to a kept log file. */
export class ManagedProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> = Promise.resolve(null);
  private exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly binary: string,
    readonly args: readonly string[],
    readonly logFile: string,
    private readonly registry: Set<ManagedProcess>,
  ) {}

  /** Whether the process is running. */
  get running(): boolean {
    return this.child !== undefined && this.exitCode === undefined;
  }

  /** Starts the process; its stdout and stderr are appended to `logFile`. */
  start(): void {
    const log = createWriteStream(this.logFile, { flags: "a" });
    log.write(`\n==== ${new Date().toISOString()} ${this.binary} ${this.args.join(" ")}\n`);
    // setpriv --pdeathsig makes the kernel kill the child when the test
    // process dies, even by SIGKILL; exit handlers alone cannot do that.
    const deathsig = hasSetpriv();
    const [cmd, argv] = deathsig
      ? ["setpriv", ["--pdeathsig", "KILL", "--", this.binary, ...this.args]]
      : [this.binary, [...this.args]];
    // In a process group of its own, a terminal's Ctrl-C reaches only the
    // test or `tessera dev` process, which stops the control plane in order
    // (the operator first, while the apiserver still answers); the death
    // signal still takes the process down if its parent dies. Without
    // setpriv it stays in the parent's group, so Ctrl-C still ends it.
    const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"], detached: deathsig });
    this.child = child;
    this.exitCode = undefined;
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    this.registry.add(this);
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        this.registry.delete(this);
        // Let the pipes drain into the log before closing it.
        setImmediate(() => log.end());
        resolve(code);
      });
      child.once("error", (err) => {
        log.write(`spawn error: ${err.message}\n`);
      });
    });
  }

  /** Resolves with the exit code when the process ends. */
  waitForExit(): Promise<number | null> {
    return this.exited;
  }

  /** Sends SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs = 5000): Promise<void> {
    const child = this.child;
    if (!child || this.exitCode !== undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Kills at once (as a crash would). */
  kill(): void {
    if (this.running) this.child!.kill("SIGKILL");
  }

  /**
   * What the process said last, for error messages: its error lines (klog
   * `E...` lines, `Error:` lines) of the latest run when it printed any,
   * else the last lines of the log.
   */
  tail(lines = 15): string {
    let text: string;
    try {
      text = readFileSync(this.logFile, "utf8");
    } catch {
      return "";
    }
    const run = text
      .slice(text.lastIndexOf("\n==== ") + 1)
      .trimEnd()
      .split("\n");
    const errors = run.filter((l) => /^(E\d{4} |Error:|\{"level":"(error|fatal)")/.test(l));
    return (errors.length ? errors : run).slice(-lines).join("\n");
  }
}

function hasSetpriv(): boolean {
  return ["/usr/bin/setpriv", "/bin/setpriv"].some((p) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
