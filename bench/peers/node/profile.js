// A V8 CPU profile of part of a run (node:inspector), so that a profile of a
// contender's sync holds the sync and not the process's start-up.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

/** Starts profiling now; `stop(file)` writes the .cpuprofile. */
export async function startProfile() {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return {
    async stop(/** @type {string} */ file) {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
