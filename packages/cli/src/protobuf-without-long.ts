import type { Plugin } from "esbuild";

/**
 * An esbuild plugin for `tessera bundle`: protobufjs's `require("long")`
 * finds nothing, as protobufjs allows.
 *
 * Why: long.js compiles a WebAssembly module as it loads, which costs an
 * idle operator about 0.5 MiB of RSS (docs/benchmarks.md, "Idle RSS").
 * Tessera's protobuf decoder reads 64-bit integers itself, as numbers, and
 * never asks protobufjs for a `Long`. Only protobufjs's own import is
 * answered so: an operator's code that imports long gets it.
 */
export const protobufWithoutLong: Plugin = {
  name: "tessera-protobuf-without-long",
  setup(build) {
    build.onResolve({ filter: /^long$/ }, (args) =>
      /[/\\]node_modules[/\\]protobufjs[/\\]/.test(args.importer)
        ? { path: "long", namespace: "tessera-no-long" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "tessera-no-long" }, () => ({
      contents: "module.exports = null;",
      loader: "js",
    }));
  },
};
