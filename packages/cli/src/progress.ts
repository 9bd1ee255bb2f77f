import ora from "ora";

/** Long steps, shown as they run: what is waited for, and for how long. */
export interface Progress {
  /**
   * Runs `work` as one step called `title`; `detail` says what it is doing
   * now (a package being packed, npm's last line). Resolves with its result.
   */
  step<T>(title: string, work: (detail: (text: string) => void) => Promise<T>): Promise<T>;
}

/** No output: for library callers and tests. */
export const silentProgress: Progress = { step: (_title, work) => work(() => {}) };

/**
 * Progress on the terminal with ora: a spinner whose text names the step, its
 * current detail and the seconds spent, redrawn every second, so no spinner
 * ever waits without saying on what. Off a terminal (CI, pipes, assistants)
 * ora draws nothing while it spins; each step still ends with a ✔ or ✖ line
 * and its time.
 */
export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  return {
    async step(title, work) {
      const started = Date.now();
      let detail = "";
      const spinner = ora({ text: title, stream }).start();
      const text = () => {
        const seconds = Math.round((Date.now() - started) / 1000);
        return `${title}${detail ? `: ${detail}` : ""}${seconds >= 2 ? ` (${seconds} s)` : ""}`;
      };
      const timer = setInterval(() => (spinner.text = text()), 1000);
      try {
        const result = await work((d) => {
          detail = d.trim().slice(0, 100);
          spinner.text = text();
        });
        detail = "";
        spinner.succeed(`${title} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
        return result;
      } catch (err) {
        spinner.fail(`${title} failed after ${((Date.now() - started) / 1000).toFixed(1)} s`);
        throw err;
      } finally {
        clearInterval(timer);
      }
    },
  };
}
