/** Go's time.Duration.String(): "1h2m3.5s", "150ms", "0s". */
export function formatGoDuration(nanos: number): string {
  if (nanos === 0) return "0s";
  const sign = nanos < 0 ? "-" : "";
  let n = Math.abs(nanos);
  if (n < 1e9) {
    const [unit, size] = n < 1e3 ? ["ns", 1] : n < 1e6 ? ["µs", 1e3] : ["ms", 1e6];
    return `${sign}${trimFraction(n / size)}${unit}`;
  }
  const hours = Math.floor(n / 3.6e12);
  n -= hours * 3.6e12;
  const minutes = Math.floor(n / 6e10);
  n -= minutes * 6e10;
  const seconds = trimFraction(n / 1e9);
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

const trimFraction = (v: number) => String(Number(v.toFixed(9)));
