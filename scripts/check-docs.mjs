// Type-checks every TypeScript block of docs/ and of the top README.md, so
// the docs cannot rot: each ```ts block is written out as a module of its
// own under .docs-check/ (imports of @tessera/* resolve to this checkout's
// built packages) and compiled with tsc, strict. A block that is not meant to
// compile on its own (a fragment) is fenced ```ts fragment and skipped: keep
// those few. Errors are reported at the Markdown file and line.
// Usage: node scripts/check-docs.mjs   (after npm run build; part of npm run lint)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, ".docs-check");
const fence = /^```(ts|typescript)([^\n]*)\n([\s\S]*?)^```$/gm;

/** Markdown files under `dir`, recursively, but not the generated API reference. */
function markdown(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === join(root, "docs/api") ? [] : markdown(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const blocks = new Map(); // module file -> { doc, line }
let skipped = 0;
for (const doc of [join(root, "README.md"), ...markdown(join(root, "docs"))]) {
  const text = readFileSync(doc, "utf8");
  for (const match of text.matchAll(fence)) {
    if (match[2].split(/\s+/).includes("fragment")) {
      skipped++;
      continue;
    }
    const line = text.slice(0, match.index).split("\n").length + 1; // the block's first line
    const name = `${relative(root, doc).replace(/[^A-Za-z0-9]+/g, "_")}_L${line}.ts`;
    // `export {}` makes every block a module, so top-level names do not collide.
    writeFileSync(join(out, name), `${match[3]}\nexport {};\n`);
    blocks.set(name, { doc: relative(root, doc), line });
  }
}
writeFileSync(
  join(out, "tsconfig.json"),
  JSON.stringify({
    compilerOptions: {
      target: "ES2023",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node", "mocha"],
      lib: ["ES2023"],
    },
    include: ["*.ts"],
  }),
);
writeFileSync(join(out, "package.json"), JSON.stringify({ type: "module", private: true }));

const tsc =
  blocks.size === 0
    ? { status: 0 }
    : spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", out], {
        encoding: "utf8",
      });
if (tsc.status !== 0) {
  // ".docs-check/docs_x_md_L12.ts(3,5): error TS..." -> "docs/x.md:14:5: error TS..."
  const report = (tsc.stdout + tsc.stderr).replace(/^([^\s(]+\.ts)\((\d+),(\d+)\)/gm, (all, file, l, c) => {
    const block = blocks.get(file.split("/").pop());
    return block ? `${block.doc}:${block.line + Number(l) - 1}:${c}` : all;
  });
  console.error(report.trim());
  console.error(`docs: TypeScript blocks that do not compile (of ${blocks.size}); fix the block or the API`);
  process.exit(1);
}
if (existsSync(out)) rmSync(out, { recursive: true, force: true });
console.log(`docs: all ${blocks.size} TypeScript blocks compile (${skipped} marked fragment)`);
