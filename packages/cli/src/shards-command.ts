import { sleep, SystemClock } from "@tessera/core";
import { ApiClient, loadKubeConfig } from "@tessera/client";
import { CliError } from "./cli-error.js";
import { renderRing } from "./render-ring.js";
import { readRings, ringToJson } from "./ring-snapshot.js";

/** Options of `tessera shards`. */
export interface ShardsOptions {
  readonly namespace: string;
  readonly ring?: string;
  readonly kubeconfig?: string;
  readonly json?: boolean;
  readonly watch?: boolean;
  /** Polling interval of --watch; default 1 s. */
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
  readonly out?: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * Prints the rings in a namespace, drawn (or as JSON); with `watch`, redraws
 * whenever what it read changes, until `signal` aborts.
 */
export async function showShards(options: ShardsOptions): Promise<void> {
  const out = options.out ?? process.stdout;
  const kubeConfig = await loadKubeConfig(options.kubeconfig ? { file: options.kubeconfig } : {});
  const client = new ApiClient(kubeConfig, { fieldManager: "tessera-cli" });
  const color = out.isTTY === true && !process.env["NO_COLOR"];
  const clock = new SystemClock();
  let last = "";
  for (;;) {
    let text: string;
    try {
      const rings = await readRings(client, options.namespace, options.ring);
      if (!rings.length && !options.watch) {
        throw new CliError(
          `no ring in namespace ${options.namespace}${options.ring ? ` named ${options.ring}` : ""}: a sharded operator publishes its assignment as a ConfigMap labelled sharding.tessera.dev/ring there (pass -n with the operator's namespace)`,
          1,
        );
      }
      text = options.json
        ? JSON.stringify(rings.map(ringToJson), null, 2) + "\n"
        : rings.map((r) => renderRing(r, { color })).join("\n") ||
          `no ring in namespace ${options.namespace} yet\n`;
    } catch (err) {
      if (!options.watch || err instanceof CliError) throw err;
      text = `could not read the rings: ${(err as Error).message}\n`;
    }
    if (text !== last) {
      out.write(options.watch && out.isTTY ? `\x1b[H\x1b[2J${text}` : text);
      last = text;
    }
    if (!options.watch || options.signal?.aborted) return;
    await sleep(clock, options.intervalMs ?? 1000, options.signal);
    if (options.signal?.aborted) return;
  }
}
