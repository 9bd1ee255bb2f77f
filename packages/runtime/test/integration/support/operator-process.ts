// One Widget operator replica as a child process (widget-operator-process.js),
// with its stdout lines parsed: reconcile records, ready, stopped.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { eventually } from "@tessera/testenv";
import type { ReconcileRecord } from "../widget.js";

const MAIN = fileURLToPath(new URL("../widget-operator-process.js", import.meta.url));

export interface OperatorLine extends Partial<ReconcileRecord> {
  ev: "listening" | "ready" | "start" | "reconcile" | "stopped";
  identity?: string;
  /** With "listening": the ports its probe and metrics servers got. */
  health?: number;
  metrics?: number;
}

/** A running replica: its lines so far, its stderr tail, and how it exited. */
export class OperatorProcess {
  readonly lines: OperatorLine[] = [];
  readonly reconciles: ReconcileRecord[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private stderr = "";

  constructor(
    readonly name: string,
    env: Record<string, string>,
  ) {
    this.child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    createInterface({ input: this.child.stdout! }).on("line", (text) => {
      let line: OperatorLine;
      try {
        line = JSON.parse(text) as OperatorLine;
      } catch {
        return;
      }
      this.lines.push(line);
      if (line.ev === "reconcile") this.reconciles.push(line as unknown as ReconcileRecord);
    });
    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-20_000);
    });
    this.exited = new Promise((resolve) =>
      this.child.on("exit", (code, signal) => resolve({ code, signal })),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** The last lines of its log (stderr): for failure messages. */
  get log(): string {
    return this.stderr;
  }

  /** Whether the process has exited. */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async ready(limitMs = 60_000): Promise<void> {
    await eventually(
      `${this.name} prints ready\n${this.stderr}`,
      () => this.lines.some((l) => l.ev === "ready") || !this.alive,
      limitMs,
    );
    if (!this.alive) throw new Error(`${this.name} exited before ready:\n${this.stderr}`);
  }

  /** The ports its probe and metrics servers listen on, from its "listening" line (0 for one turned off). */
  get ports(): { health: number; metrics: number } {
    const line = this.lines.find((l) => l.ev === "listening");
    if (!line) throw new Error(`${this.name} has not said where it listens:\n${this.stderr}`);
    return { health: line.health ?? 0, metrics: line.metrics ?? 0 };
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** The reconciles it finished of `key`. */
  reconcilesOf(key: string): ReconcileRecord[] {
    return this.reconciles.filter((r) => r.key === key);
  }
}
