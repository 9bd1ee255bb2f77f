// What a user does first: `npm create tessera@latest my-operator`, with the
// npm registry as the only source. Every package of this checkout is
// published to a real registry (verdaccio on loopback, @tessera served from
// what was published only), then, in an empty directory whose npm knows that
// registry alone, `npm create tessera` scaffolds a project that installs
// from it (no `file:` specs, no vendored tarballs) and passes its own
// `npm test` on a real control plane.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalRegistry } from "../support/local-registry.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "../../../../..");

interface Run {
  readonly status: number | null;
  readonly out: string;
  readonly seconds: number;
}

/** Runs a command to its end; its output is kept whole, stdout and stderr interleaved as they came. */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const out: string[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b.toString()));
    child.stderr.on("data", (b: Buffer) => out.push(b.toString()));
    child.on("error", reject);
    child.on("exit", (status) =>
      resolve({ status, out: out.join(""), seconds: (Date.now() - started) / 1000 }),
    );
  });
}

/** The packages a release publishes: every non-private one under packages/. */
function publishedPackages(): { name: string; dir: string; version: string }[] {
  return readdirSync(join(repo, "packages"))
    .map((d) => join(repo, "packages", d))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({
      dir,
      ...(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name: string;
        version: string;
        private?: boolean;
      }),
    }))
    .filter((p) => !(p as { private?: boolean }).private);
}

async function reachable(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(10_000) })).status < 500;
  } catch {
    return false;
  }
}

describe("npm create tessera, from a registry", function () {
  this.timeout(20 * 60_000);
  let work: string;
  let registry: LocalRegistry;

  before(async function () {
    // The third-party packages come through the local registry's uplink; the test command needs the
    // public registry anyway (npm ci), so an unreachable one is a failure that says so, not a skip.
    assert.ok(
      await reachable("https://registry.npmjs.org/inversify"),
      "the public npm registry (https://registry.npmjs.org) is unreachable: the local registry proxies inversify, mocha and TypeScript from it",
    );
    work = mkdtempSync(join(tmpdir(), "tessera-registry-"));
    registry = new LocalRegistry(join(work, "registry"));
    await registry.start();
  });

  after(async () => {
    await registry?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("publishes every package, then scaffolds a project that installs from the registry alone and passes its npm test", async () => {
    const transcript: string[] = [];
    const record = (command: string, result: Run) =>
      transcript.push(
        `$ ${command}\n${result.out.trimEnd()}\n# exit ${result.status}, ${result.seconds.toFixed(1)} s\n`,
      );

    const publisher = registry.npmEnv(join(work, "publisher"));
    const packages = publishedPackages();
    assert.ok(
      packages.some((p) => p.name === "create-tessera") && packages.some((p) => p.name === "@tessera/cli"),
    );
    const published = await Promise.all(
      packages.map((p) => run("npm", ["publish", "--registry", registry.url], p.dir, publisher)),
    );
    transcript.push(
      `$ npm publish --registry ${registry.url}   # in each of ${packages.map((p) => p.dir.slice(repo.length + 1)).join(", ")}\n` +
        `# ${packages.length} published, the slowest in ${Math.max(...published.map((r) => r.seconds)).toFixed(1)} s\n`,
    );
    published.forEach((result, i) =>
      assert.equal(result.status, 0, `npm publish of ${packages[i]!.name} failed:\n${result.out}`),
    );
    for (const p of packages) {
      const meta = (await (await fetch(`${registry.url}${p.name.replace("/", "%2f")}`)).json()) as {
        "dist-tags"?: Record<string, string>;
      };
      assert.equal(meta["dist-tags"]?.["latest"], p.version, `${p.name} is on the registry at ${p.version}`);
    }

    // An empty directory, outside the checkout, whose npm knows the local registry only.
    const user = join(work, "user");
    mkdirSync(user);
    const env = { ...registry.npmEnv(join(work, "home")), CI: "1" };
    const args = ["my-operator", "--", "--group", "shop.example.com", "--kind", "Order", "--yes"];
    const created = await run("npm", ["create", "tessera@latest", ...args], user, env);
    record(`npm create tessera@latest ${args.join(" ")}`, created);
    assert.equal(created.status, 0, created.out);
    assert.match(created.out, /created my-operator: Order \(shop\.example\.com\/v1alpha1\), leader mode/);

    const project = join(user, "my-operator");
    assert.ok(!existsSync(join(project, "vendor/tessera")), "no tarballs vendored into the project");
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      overrides?: unknown;
    };
    const cli = packages.find((p) => p.name === "@tessera/cli")!;
    const named = { ...pkg.dependencies, ...pkg.devDependencies };
    for (const name of ["@tessera/runtime", "@tessera/cli", "@tessera/testenv"]) {
      assert.equal(named[name], `^${cli.version}`, `${name} is named by a registry range`);
    }
    for (const [name, spec] of Object.entries(named)) {
      assert.doesNotMatch(spec, /^(file|link|git|https?):/, `${name}: ${spec} is not a registry range`);
    }
    assert.equal(pkg.overrides, undefined, "no overrides pointing at tarballs");
    const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string; resolved?: string; link?: boolean }>;
    };
    const entries = Object.entries(lock.packages).filter(([path]) => path !== "");
    assert.ok(entries.length > 50, "the lockfile lists the installed tree");
    for (const [path, entry] of entries) {
      assert.ok(!entry.link, `${path} is a link, not an installed package`);
      assert.ok(
        entry.resolved?.startsWith(registry.url),
        `${path} was resolved from ${entry.resolved}, not the local registry`,
      );
    }
    for (const name of ["@tessera/runtime", "@tessera/core", "@tessera/cli", "@tessera/testenv"]) {
      const entry = lock.packages[`node_modules/${name}`];
      assert.equal(entry?.version, cli.version, `${name} is installed at the published version`);
    }

    // The CLI itself from the registry is the same command.
    const npxArgs = [
      "--yes",
      "@tessera/cli@latest",
      "new",
      "second-operator",
      "--sharded",
      "--no-install",
      "--yes",
    ];
    const viaNpx = await run("npx", npxArgs, user, env);
    record(`npx ${npxArgs.join(" ")}`, viaNpx);
    assert.equal(viaNpx.status, 0, viaNpx.out);
    assert.match(viaNpx.out, /created second-operator: Widget \(example\.com\/v1alpha1\), sharded mode/);
    const second = JSON.parse(readFileSync(join(user, "second-operator/package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    assert.equal(second.dependencies["@tessera/runtime"], `^${cli.version}`);

    const tested = await run("npm", ["test"], project, env);
    record("cd my-operator && npm test", tested);
    if (process.env["TESSERA_REGISTRY_TRANSCRIPT"]) {
      writeFileSync(process.env["TESSERA_REGISTRY_TRANSCRIPT"], transcript.join("\n"));
    }
    assert.equal(tested.status, 0, tested.out);
    assert.match(tested.out, /\d+ passing/);
    assert.doesNotMatch(tested.out, /failing/);
  });
});
