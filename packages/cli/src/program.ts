import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { Command, Option } from "commander";
import { CliError } from "./cli-error.js";
import { findKind } from "./api-version.js";
import { createApi } from "./create-api.js";
import { createWebhook } from "./create-webhook.js";
import { generate } from "./generate.js";
import { newProject } from "./new-project.js";
import { readKindSchema } from "./schema-file.js";
import { ask, mayPrompt } from "./prompts.js";
import { tesseraCheckout } from "./tessera-packages.js";
import { terminalProgress } from "./progress.js";
import { packageManager } from "./package-manager.js";
import { readProjectConfig } from "./project-config.js";
import { showShards } from "./shards-command.js";
import { runDev } from "./dev-command.js";
import { runBundle } from "./bundle-command.js";
import { cliVersion } from "./cli-version.js";
import { loadKubeConfig } from "@tessera/client";

const log = (line: string) => process.stderr.write(`tessera: ${line}\n`);

/** The `tessera` command line, as a commander program (exported for tests and embedding). */
export function buildProgram(): Command {
  const program = new Command("tessera")
    .description("Scaffold, generate and run Kubernetes operators written with Tessera")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ outputError: (text, write) => write(text) });

  program
    .command("new")
    .description("scaffold an operator project: one custom resource, its reconciler, tests, deploy manifests")
    .argument("<dir>", "the directory to create (its name is the project's name unless --name)")
    .option("--group <group>", "API group of the custom resource, a DNS subdomain you own", undefined)
    .option("--version <version>", "API version (v1alpha1, v1beta1, v1, ...)", undefined)
    .option("--kind <Kind>", "kind of the custom resource, UpperCamelCase", undefined)
    .addOption(new Option("--sharded", "run the controllers sharded across replicas").conflicts("leader"))
    .addOption(
      new Option("--leader", "run the controllers on the elected leader (default)").conflicts("sharded"),
    )
    .option("--name <name>", "project name (npm package, Deployment); default: the directory's name")
    .option("--namespace <ns>", "namespace it deploys to; default: the project name")
    .addOption(
      new Option(
        "--package-manager <pm>",
        "package manager (pnpm runs through npx, nothing installed globally)",
      )
        .choices(["npm", "pnpm"])
        .default("npm"),
    )
    .option(
      "--tessera-packages <path>",
      "install @tessera from a Tessera checkout (packed) or a directory of its tarballs instead of the registry; default: the checkout this CLI runs from, if any",
    )
    .option(
      "--tessera-version <range>",
      "semver range of @tessera on the registry; default: ^ this CLI's version",
      `^${cliVersion()}`,
    )
    .option(
      "--from-registry",
      "name @tessera by --tessera-version even when run from a checkout (for a workspace inside it)",
    )
    .option("--helm", "also write a Helm chart of the same manifests (chart/)")
    .option("--no-install", "write the files only (no npm install, no generate)")
    .option("--force", "write into a non-empty directory")
    .option("-y, --yes", "never prompt: take defaults for what is not given")
    .action(async (dir: string, o: Record<string, string | boolean | undefined>) => {
      const prompt = mayPrompt(o["yes"] as boolean | undefined);
      const value = async (key: string, question: string, fallback: string) =>
        (o[key] as string | undefined) ?? (prompt ? await ask(question, fallback) : fallback);
      const group = await value("group", "API group", "example.com");
      const version = await value("version", "API version", "v1alpha1");
      const kind = await value("kind", "Kind", "Widget");
      const mode = o["sharded"] ? "sharded" : "leader";
      const packages =
        (o["tesseraPackages"] as string | undefined) ?? (o["fromRegistry"] ? undefined : tesseraCheckout());
      const result = await newProject({
        dir,
        group,
        version,
        kind,
        mode,
        ...(o["name"] ? { name: o["name"] as string } : {}),
        ...(o["namespace"] ? { namespace: o["namespace"] as string } : {}),
        force: !!o["force"],
        helm: !!o["helm"],
        packageManager: o["packageManager"] as "npm" | "pnpm",
        install: o["install"] !== false,
        ...(packages ? { tesseraPackages: packages } : { tesseraRange: o["tesseraVersion"] as string }),
        progress: terminalProgress(),
      });
      const rel = relative(process.cwd(), result.dir) || ".";
      const pm = packageManager(o["packageManager"] as "npm" | "pnpm");
      process.stdout.write(
        `created ${rel}: ${kind} (${group}/${version}), ${mode} mode, ${result.files.length} files\n\n` +
          `  cd ${rel}\n  ${pm.run} test          # generated files current, compile, tests on a real control plane\n` +
          `  ${pm.exec} tessera create api <Kind>   # another kind\n`,
      );
    });

  const create = program.command("create").description("add to an existing project");
  create
    .command("api")
    .description(
      "add a kind: its schema, a reconciler and a test; or, for a kind the project has, a version (--version); then regenerate",
    )
    .argument("<Kind>", "kind of the custom resource, UpperCamelCase", (v: string) => v)
    .option("--group <group>", "API group of a new kind; default: the group of the project's first schema")
    .option(
      "--version <version>",
      "API version of a new kind (default v1alpha1), or the version to add to an existing kind (its schema copied from the kind's highest version)",
    )
    .option("--storage", "with --version on an existing kind: make the new version the stored one (the hub)")
    .option("--plural <plural>", "resource name; default: the kind's English plural, lower case")
    .option("--dir <dir>", "the project's root", ".")
    .option("--no-generate", "do not run tessera generate afterwards")
    .action(
      async (
        kind: string,
        o: {
          group?: string;
          version?: string;
          storage?: boolean;
          plural?: string;
          dir: string;
          generate: boolean;
        },
      ) => {
        const result = createApi({
          dir: o.dir,
          kind,
          ...(o.group
            ? { group: o.group }
            : findKind(resolve(o.dir), kind)
              ? {}
              : { group: projectGroup(o.dir) }),
          ...(o.version ? { version: o.version } : {}),
          ...(o.storage ? { storage: true } : {}),
          ...(o.plural ? { plural: o.plural } : {}),
        });
        for (const [from, to] of result.renamed) process.stdout.write(`renamed ${from} to ${to}\n`);
        for (const f of result.files) process.stdout.write(`wrote ${f}\n`);
        if (result.needsConversion) {
          process.stdout.write(`\n${result.needsConversion}\n`);
          return;
        }
        if (o.generate) await runGenerate(o.dir, false);
      },
    );

  create
    .command("webhook")
    .description(
      "add webhooks for a kind: defaulting and validation (an admission plugin and its tests), conversion between its versions (and a round-trip test); then regenerate",
    )
    .argument("<Kind>", "a kind the project has, UpperCamelCase", (v: string) => v)
    .option("--defaulting", "a mutating webhook: default() fills fields in on create and update")
    .option("--validation", "a validating webhook: validateCreate() and validateUpdate() refuse objects")
    .option(
      "--conversion",
      "the conversion between the kind's versions, through the stored one (toHub/fromHub)",
    )
    .option("--dir <dir>", "the project's root", ".")
    .option("--no-generate", "do not run tessera generate afterwards")
    .action(
      async (
        kind: string,
        o: {
          defaulting?: boolean;
          validation?: boolean;
          conversion?: boolean;
          dir: string;
          generate: boolean;
        },
      ) => {
        const files = createWebhook({
          dir: o.dir,
          kind,
          defaulting: !!o.defaulting,
          validation: !!o.validation,
          conversion: !!o.conversion,
        });
        for (const f of files) process.stdout.write(`wrote ${f}\n`);
        if (o.generate) await runGenerate(o.dir, false);
      },
    );

  program
    .command("generate")
    .description(
      "regenerate CRDs, TypeScript types, validators, RBAC and webhook manifests from schemas/, the controllers and the webhooks",
    )
    .option("--dir <dir>", "the project's root", ".")
    .option("--check", "change nothing; exit 1 when a generated file is stale (for CI)")
    .action(async (o: { dir: string; check?: boolean }) => runGenerate(o.dir, !!o.check));

  program
    .command("bundle")
    .description(
      "bundle the compiled operator with esbuild for the image's entry point: an ES module, the chunks it imports on demand beside it (chunks/) and source maps; it starts with less memory than the several hundred modules it holds",
    )
    .option("--dir <dir>", "the project's root", ".")
    .option("--entry <file>", "the compiled entry point", "dist/src/main.js")
    .option("--out <file>", "the entry module to write (its chunks go to chunks/ beside it)", "dist/main.mjs")
    .action(async (o: { dir: string; entry: string; out: string }) => {
      const { out, bytes, chunks, chunkCount, chunkBytes } = await runBundle(o);
      const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
      console.log(
        `bundled into ${relative(process.cwd(), out) || out} (${mib(bytes)} MiB) and ${chunkCount} chunks loaded on demand in ${relative(process.cwd(), chunks) || chunks} (${mib(chunkBytes)} MiB)`,
      );
    });

  program
    .command("dev")
    .description(
      "run the operator from source against a local control plane (or --kubeconfig's cluster), rebuilding and restarting on change",
    )
    .option("--dir <dir>", "the project's root", ".")
    .option(
      "--kubeconfig <file>",
      "use this cluster instead of a local control plane (the CRDs are applied to it)",
    )
    .option("--no-watch", "do not rebuild on change")
    .option(
      "--replicas <n>",
      "run n replicas, each its own identity (dev-0, dev-1, ...) and ports (:8080/:8081, :8082/:8083, ...), its log lines prefixed with its name",
      (v: string) => Number(v),
      1,
    )
    .action(async (o: { dir: string; kubeconfig?: string; watch: boolean; replicas: number }) => {
      const stop = new AbortController();
      process.once("SIGINT", () => stop.abort());
      process.once("SIGTERM", () => stop.abort());
      await runDev({
        dir: o.dir,
        ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
        watch: o.watch,
        replicas: o.replicas,
        signal: stop.signal,
        progress: terminalProgress(),
      });
    });

  program
    .command("shards")
    .description("draw the shard rings of a sharded operator: each member's slots over the hash space")
    .option(
      "-n, --namespace <ns>",
      "the operator's namespace; default: tessera.json's here, else the kubeconfig's, else default",
    )
    .option("--ring <ring>", "only this ring")
    .option("--kubeconfig <file>", "default: KUBECONFIG, in-cluster, ~/.kube/config")
    .option("--watch", "redraw on every change (Ctrl-C to stop)")
    .option("--json", "print JSON (the assignment as published, and each member) for scripts")
    .action(
      async (o: {
        namespace?: string;
        ring?: string;
        kubeconfig?: string;
        watch?: boolean;
        json?: boolean;
      }) => {
        const stop = new AbortController();
        process.once("SIGINT", () => stop.abort());
        await showShards({
          namespace: o.namespace ?? (await defaultNamespace(o.kubeconfig)),
          ...(o.ring ? { ring: o.ring } : {}),
          ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
          json: !!o.json,
          watch: !!o.watch,
          signal: stop.signal,
        });
      },
    );

  return program;
}

async function defaultNamespace(kubeconfig: string | undefined): Promise<string> {
  try {
    return readProjectConfig(process.cwd()).namespace;
  } catch {
    // not in a project
  }
  const loaded = await loadKubeConfig(kubeconfig ? { file: kubeconfig } : {});
  return loaded.namespace ?? "default";
}

async function runGenerate(dir: string, check: boolean): Promise<void> {
  const result = await generate({ dir: resolve(dir), check, log });
  if (check) {
    if (result.changed.length) {
      throw new CliError(
        `generated files are stale (run \`tessera generate\`):\n${result.changed.map((f) => `  ${f}`).join("\n")}`,
        1,
      );
    }
    process.stdout.write(`generated files are current (${result.unchanged.length} checked)\n`);
    return;
  }
  for (const f of result.changed) process.stdout.write(`wrote ${f}\n`);
  process.stdout.write(`${result.changed.length} written, ${result.unchanged.length} unchanged\n`);
}

function projectGroup(dir: string): string {
  const schemas = join(dir, "schemas");
  let first: string | undefined;
  try {
    first = readdirSync(schemas)
      .filter((f) => f.endsWith(".schema.json"))
      .sort()[0];
  } catch {
    // no schemas/ yet
  }
  if (!first) throw new CliError("the project has no schema to take the group from; pass --group");
  return readKindSchema(join(schemas, first)).header.group;
}
