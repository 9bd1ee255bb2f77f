/** The package managers `tessera new` can set a project up with. */
export type PackageManagerName = "npm" | "pnpm";

/** The pnpm release generated projects use (run through npx, so nothing is installed globally). */
export const PNPM_VERSION = "10.34.9";

/** How a project is installed and run with one package manager. */
export interface PackageManager {
  readonly name: PackageManagerName;
  /** The command and arguments that install a project's dependencies. */
  readonly install: readonly string[];
  /** How the project's README spells running a script (`npm`, `npx pnpm@…`). */
  readonly run: string;
  /** How it runs a dependency's binary (`npx`, `npx pnpm@… exec`). */
  readonly exec: string;
  /** Where package.json pins transitive packages (`overrides`, `pnpm.overrides`). */
  readonly overridesPath: readonly string[];
}

/** The {@link PackageManager} of `name`. */
export function packageManager(name: PackageManagerName): PackageManager {
  if (name === "pnpm") {
    const pnpm = `npx --yes pnpm@${PNPM_VERSION}`;
    return {
      name,
      install: ["npx", "--yes", `pnpm@${PNPM_VERSION}`, "install", "--prefer-offline"],
      run: pnpm,
      exec: `${pnpm} exec`,
      overridesPath: ["pnpm", "overrides"],
    };
  }
  return {
    name,
    install: ["npm", "install", "--no-audit", "--no-fund", "--prefer-offline"],
    run: "npm",
    exec: "npx",
    overridesPath: ["overrides"],
  };
}
