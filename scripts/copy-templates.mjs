// Copies the repository's templates/ into packages/cli/templates when
// @tessera/cli is packed (its prepack script), so the published package
// carries the templates `tessera new` renders; with --remove (postpack) the
// copy is deleted again, so the checkout keeps one source of truth.
import { cpSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(root, "packages/cli/templates");
rmSync(target, { recursive: true, force: true });
if (!process.argv.includes("--remove")) cpSync(join(root, "templates"), target, { recursive: true });
