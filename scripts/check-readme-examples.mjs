// Fails when a TypeScript block in a package's README is not, verbatim, one
// of the files under that package's examples/ folder, which the build
// compiles (each package's tsconfig includes examples/). So every example a
// user reads has been type-checked against the code it describes.
// Usage: node scripts/check-readme-examples.mjs   (part of npm run lint)
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const fence = /^```(ts|typescript)\n([\s\S]*?)^```$/gm;

/** Every file under `dir` ending in .ts (not .d.ts), recursively. */
function examples(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return examples(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

const normalize = (text) => text.replace(/[ \t]+$/gm, "").trim();
const problems = [];
let checked = 0;
const packagesDir = join(root, "packages");
for (const name of readdirSync(packagesDir)) {
  const readme = join(packagesDir, name, "README.md");
  if (!existsSync(readme)) continue;
  const files = examples(join(packagesDir, name, "examples")).map((path) => ({
    path,
    text: normalize(readFileSync(path, "utf8")),
  }));
  const markdown = readFileSync(readme, "utf8");
  for (const match of markdown.matchAll(fence)) {
    checked++;
    const block = normalize(match[2]);
    if (files.some((f) => f.text === block)) continue;
    const line = markdown.slice(0, match.index).split("\n").length;
    const firstLine = block.split("\n")[0];
    problems.push(
      `${relative(root, readme)}:${line}: this TypeScript block (starting "${firstLine}") is not the ` +
        `content of any file in ${relative(root, join(packagesDir, name, "examples"))}/; ` +
        `copy the example file into the README verbatim (or change the file, which the build compiles)`,
    );
  }
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  console.error(
    `README examples: ${problems.length} of ${checked} TypeScript blocks are not compiled examples`,
  );
  process.exit(1);
}
console.log(`README examples: all ${checked} TypeScript blocks are compiled examples`);
