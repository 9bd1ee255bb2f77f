import { createInterface } from "node:readline/promises";

/**
 * Whether the CLI may ask: a terminal on both ends, not CI, and no `--yes`.
 * Scripts and coding assistants call the CLI too; they must never hang.
 */
export function mayPrompt(yes: boolean | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  return !yes && !env["CI"] && process.stdin.isTTY === true && process.stdout.isTTY === true;
}

/** Asks for `question`, offering `fallback` (taken on an empty answer). */
export async function ask(question: string, fallback: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (await rl.question(`${question} (${fallback}): `)).trim();
    return answer || fallback;
  } finally {
    rl.close();
  }
}
