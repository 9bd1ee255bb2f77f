import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { freePort } from "@tessera/testenv";

/**
 * A real npm registry for tests: verdaccio on 127.0.0.1, its storage and
 * config under `dir`. Anyone may publish `@tessera/*` and `create-tessera`,
 * which it serves only from what was published to it (no uplink), so a
 * project that installs them got them from here; every other package is
 * proxied from the public registry (the scaffold needs inversify, mocha,
 * TypeScript and the rest).
 */
export class LocalRegistry {
  #child: ChildProcess | undefined;
  #url = "";

  constructor(
    readonly dir: string,
    private readonly uplink = "https://registry.npmjs.org/",
  ) {}

  /** `http://127.0.0.1:<port>/`, once started. */
  get url(): string {
    return this.#url;
  }

  async start(): Promise<void> {
    const port = await freePort();
    this.#url = `http://127.0.0.1:${port}/`;
    mkdirSync(this.dir, { recursive: true });
    const config = join(this.dir, "verdaccio.yaml");
    const local = { access: "$all", publish: "$all", unpublish: "$all" };
    writeFileSync(
      config,
      JSON.stringify({
        storage: join(this.dir, "storage"),
        auth: { htpasswd: { file: join(this.dir, "htpasswd"), max_users: -1 } },
        uplinks: { npmjs: { url: this.uplink, timeout: "60s", max_fails: 5 } },
        packages: {
          "@tessera/*": local,
          "create-tessera": local,
          "**": { access: "$all", publish: "$authenticated", proxy: "npmjs" },
        },
        web: { enable: false },
        log: { type: "stdout", format: "pretty", level: "warn" },
      }),
    );
    const bin = join(
      dirname(createRequire(import.meta.url).resolve("verdaccio/package.json")),
      "bin/verdaccio",
    );
    const child = spawn(process.execPath, [bin, "--config", config, "--listen", `127.0.0.1:${port}`], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.#child = child;
    const output: string[] = [];
    child.stdout.on("data", (b: Buffer) => output.push(b.toString()));
    child.stderr.on("data", (b: Buffer) => output.push(b.toString()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) {
        throw new Error(`verdaccio exited (${child.exitCode}) before it served:\n${output.join("")}`);
      }
      try {
        if ((await fetch(`${this.#url}-/ping`)).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`verdaccio did not answer within 60 s:\n${output.join("")}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /**
   * The environment of an npm that knows this registry only: a userconfig and
   * globalconfig of its own (the machine's .npmrc is not read), an empty
   * cache, and none of the `npm_config_*` the calling npm may have set. The
   * token is a placeholder: npm will not publish without one, and this
   * registry lets anyone publish @tessera.
   */
  npmEnv(home: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
    mkdirSync(home, { recursive: true });
    const host = this.#url.replace(/^http:/, "");
    const userconfig = join(home, ".npmrc");
    writeFileSync(
      userconfig,
      [
        `registry=${this.#url}`,
        `${host}:_authToken=local-registry-accepts-anyone`,
        "update-notifier=false",
        "fund=false",
        "audit=false",
        "",
      ].join("\n"),
    );
    const globalconfig = join(home, "npmrc-global");
    writeFileSync(globalconfig, "");
    const env = Object.fromEntries(
      Object.entries(base).filter(([k]) => !/^npm_config_/i.test(k) && !k.startsWith("npm_package_")),
    );
    return {
      ...env,
      npm_config_registry: this.#url,
      npm_config_userconfig: userconfig,
      npm_config_globalconfig: globalconfig,
      npm_config_cache: join(home, "npm-cache"),
    };
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
}
