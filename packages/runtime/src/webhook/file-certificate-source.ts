import type { FSWatcher } from "node:fs";
import { join } from "node:path";
import { createSecureContext } from "node:tls";
import { type Clock, type Logger, nodeFs, type Timer, toError } from "@tessera/core";
import type { ServingCertificate } from "../server/serving-certificate.js";
import type { CertificateSource } from "./certificate-source.js";

/** Options of a {@link FileCertificateSource}. */
export interface FileCertificateSourceOptions {
  /** The directory of the files (a mounted Secret: `webhook.certDir`). */
  readonly certDir: string;
  /** Default `tls.crt`, as a `kubernetes.io/tls` Secret names it. */
  readonly certName?: string;
  /** Default `tls.key`. */
  readonly keyName?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How often the files are read again besides on change events; default 10 s, as controller-runtime's certwatcher. */
  readonly pollIntervalMs?: number;
}

/**
 * The webhook server's certificate from PEM files in a directory (a mounted
 * Secret, cert-manager's or the one `installWebhooks` writes in tests),
 * read at start and again whenever the directory changes (the kubelet swaps
 * a mounted Secret's files at once through a symlink) or every
 * `pollIntervalMs`, so a rotated certificate is served without a restart.
 * A pair that cannot be read or does not belong together (a rotation half
 * written) keeps the previous certificate and is logged; until a first one
 * loads, {@link FileCertificateSource.problem} says why, which the
 * server's readiness check reports.
 */
export class FileCertificateSource implements CertificateSource {
  private certificate: ServingCertificate | undefined;
  private readonly listeners = new Set<(certificate: ServingCertificate) => void>();
  private lastProblem: string | undefined = "not read yet";
  private readonly certFile: string;
  private readonly keyFile: string;

  constructor(private readonly options: FileCertificateSourceOptions) {
    this.certFile = join(options.certDir, options.certName ?? "tls.crt");
    this.keyFile = join(options.certDir, options.keyName ?? "tls.key");
  }

  current(): ServingCertificate | undefined {
    return this.certificate;
  }

  /** Why no certificate is loaded yet; undefined once one is. */
  problem(): string | undefined {
    return this.certificate ? undefined : this.lastProblem;
  }

  onChange(listener: (certificate: ServingCertificate) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async run(signal: AbortSignal): Promise<void> {
    await this.reload();
    let watcher: FSWatcher | undefined;
    let pending = false;
    const reloadSoon = () => {
      if (pending || signal.aborted) return;
      pending = true;
      // The kubelet writes the new files, then swaps a symlink: read once the burst of events is over.
      this.options.clock.setTimer(100, () => {
        pending = false;
        void this.reload();
      });
    };
    try {
      watcher = nodeFs.watch(this.options.certDir, reloadSoon);
      watcher.on("error", () => watcher?.close());
    } catch {
      watcher = undefined; // no directory yet: polling finds the files once they appear
    }
    const interval = this.options.pollIntervalMs ?? 10_000;
    const clock = this.options.clock;
    await new Promise<void>((resolve) => {
      const poll = (): void => {
        reloadSoon();
        timer = clock.setTimer(interval, poll);
      };
      let timer: Timer = clock.setTimer(interval, poll);
      const stop = () => {
        timer.cancel();
        watcher?.close();
        resolve();
      };
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
    });
  }

  /** Reads the pair; on a new valid one, keeps and announces it. */
  private async reload(): Promise<void> {
    let next: ServingCertificate;
    try {
      next = {
        certPem: await nodeFs.promises.readFile(this.certFile, "utf8"),
        keyPem: await nodeFs.promises.readFile(this.keyFile, "utf8"),
      };
      createSecureContext({ cert: next.certPem, key: next.keyPem });
    } catch (error) {
      const problem =
        `cannot serve the certificate ${this.certFile} with the key ${this.keyFile}: ${describeError(error)}; ` +
        `mount a kubernetes.io/tls Secret (tls.crt, tls.key) at webhook.certDir`;
      if (problem !== this.lastProblem) {
        this.lastProblem = problem;
        this.options.logger.warn(`webhook: ${problem}`, {
          keeping: this.certificate ? "the previous certificate" : "none",
        });
      }
      return;
    }
    this.lastProblem = undefined;
    const current = this.certificate;
    if (current && current.certPem === next.certPem && current.keyPem === next.keyPem) return;
    this.certificate = next;
    this.options.logger.info(`webhook: ${current ? "serving a new" : "loaded the"} certificate`, {
      certFile: this.certFile,
    });
    for (const listener of [...this.listeners]) listener(next);
  }
}

function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code !== undefined && code.startsWith("E") ? code : toError(error).message;
}
