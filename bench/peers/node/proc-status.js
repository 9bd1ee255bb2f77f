// What a contender reports of itself, read the way the Go and Rust
// contenders read it: RSS and peak RSS from /proc/self/status, CPU time of
// the whole process.
import { readFileSync } from "node:fs";

/** A memory line of /proc/self/status (VmRSS, VmHWM), in MiB rounded to 0.1. */
export function rssMiB(/** @type {"VmRSS" | "VmHWM"} */ field) {
  const status = readFileSync("/proc/self/status", "utf8");
  const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return Math.round((kib / 1024) * 10) / 10;
}

/** This process's user + system CPU time so far, in ms. */
export function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The live JS heap after full collections, in MiB (node --expose-gc; undefined without it). */
export function liveHeapMiB() {
  if (typeof globalThis.gc !== "function") return undefined;
  for (let i = 0; i < 3; i++) globalThis.gc();
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
}
