/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the years `toISOString` writes with four digits. */
const FIRST = -62_167_219_200_000;
const LAST = 253_402_300_799_999;

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * `time.toISOString()` (`time` a Date or milliseconds since the epoch), read field by field with the `getUTC*`
 * methods: `2026-12-05T10:00:00.000Z`.
 *
 * Why: V8's own Date formatting (`toISOString`, `toJSON`, `toUTCString`)
 * sets up its time-zone cache from ICU on first use, which reads about
 * 1.2 MiB of the node binary that an idle operator otherwise never touches
 * (docs/benchmarks.md, "Idle RSS"); the `getUTC*` methods do not. Years
 * outside 0 to 9999, and invalid times, are left to `toISOString` (which
 * throws a RangeError for the latter).
 */
export function isoTime(time: number | Date): string {
  const date = typeof time === "number" ? new Date(time) : time;
  const t = date.getTime();
  if (!(t >= FIRST && t <= LAST)) return date.toISOString();
  const year = date.getUTCFullYear();
  const millis = date.getUTCMilliseconds();
  return (
    `${year < 1000 ? `${year}`.padStart(4, "0") : year}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}` +
    `T${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}` +
    `.${millis < 10 ? `00${millis}` : millis < 100 ? `0${millis}` : millis}Z`
  );
}
