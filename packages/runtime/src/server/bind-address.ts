/** Where a server listens: a host (absent: every interface) and a port (0: any free one). */
export interface BindAddress {
  readonly host: string | undefined;
  readonly port: number;
}

/**
 * Parses a bind address as controller-runtime writes them: `":8080"` (every
 * interface), `"127.0.0.1:8080"`, `"[::1]:8080"`, or `"0"` for "no server"
 * (`undefined`). Throws a TypeError saying what is accepted.
 */
export function parseBindAddress(address: string, what: string): BindAddress | undefined {
  if (address === "0") return undefined;
  const m = /^(\[[^\]]*\]|[^:[\]]*):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) {
    throw new TypeError(
      `${what}: bind address "${address}" is not "host:port", ":port" or "0" (off), e.g. ":8080" or "127.0.0.1:8080"`,
    );
  }
  const host = m[1]!.replace(/^\[|\]$/g, "");
  return { host: host === "" ? undefined : host, port };
}
