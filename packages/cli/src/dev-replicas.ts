import { CliError } from "./cli-error.js";

/** One local replica of `tessera dev`: what makes it a member of its own. */
export interface DevReplica {
  /** Its `TESSERA_IDENTITY`: its name in elections and rings. */
  readonly identity: string;
  /** The variables that set it apart from the other replicas. */
  readonly env: Readonly<Record<string, string>>;
  /** What its log lines start with (empty for a single replica). */
  readonly prefix: string;
}

/** The first replica's metrics port; its health port is the next, and each further replica takes the next two. */
export const DEV_FIRST_PORT = 8080;

/**
 * The identities and ports of `count` local replicas. One replica is
 * `identity` with the runtime's default ports (:8080 metrics, :8081 health),
 * as before; several are `<identity>-0`, `<identity>-1`, ... on ports
 * :8080/:8081, :8082/:8083, ..., each prefixing its log lines with its name,
 * so a sharded operator's replicas are told apart in one terminal and in
 * `tessera shards`.
 */
export function devReplicas(count: number, identity: string): DevReplica[] {
  if (!Number.isInteger(count) || count < 1 || count > 16) {
    throw new CliError(`--replicas must be a whole number from 1 to 16, not ${String(count)}`);
  }
  if (count === 1) return [{ identity, env: { TESSERA_IDENTITY: identity }, prefix: "" }];
  const width = Math.max(...Array.from({ length: count }, (_, i) => `${identity}-${i}`.length));
  return Array.from({ length: count }, (_, i) => {
    const name = `${identity}-${i}`;
    return {
      identity: name,
      env: {
        TESSERA_IDENTITY: name,
        TESSERA_METRICS_BIND_ADDRESS: `:${DEV_FIRST_PORT + 2 * i}`,
        TESSERA_HEALTH_BIND_ADDRESS: `:${DEV_FIRST_PORT + 2 * i + 1}`,
      },
      prefix: `${name.padEnd(width)} | `,
    };
  });
}
