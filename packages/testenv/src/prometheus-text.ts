/** One sample of a metric family: its full name (with `_bucket`, `_sum`, ...), labels and value. */
export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A metric family of a Prometheus text exposition. */
export interface PrometheusFamily {
  readonly name: string;
  /** `counter`, `gauge`, `histogram`, `summary` or `untyped`. */
  type: string;
  help: string;
  readonly samples: PrometheusSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

/**
 * Parses the Prometheus text format (version 0.0.4) into families by name,
 * for tests and benchmarks that scrape `/metrics` (an operator's or the API
 * server's). Samples of a histogram (`x_bucket`, `x_sum`, `x_count`) belong to
 * family `x`. Throws on a line it cannot read, quoting it.
 */
export function parsePrometheusText(text: string): Map<string, PrometheusFamily> {
  const families = new Map<string, PrometheusFamily>();
  const family = (name: string): PrometheusFamily => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: "untyped", help: "", samples: [] }));
    return f;
  };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
      if (m?.[1] === "HELP") family(m[2]!).help = m[3]!;
      else if (m?.[1] === "TYPE") family(m[2]!).type = m[3]!;
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const labels: Record<string, string> = {};
    for (const l of (labelText ?? "").matchAll(LABEL)) {
      labels[l[1]!] = l[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    }
    const value = valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText);
    const base = SUFFIXES.map((s) => (name.endsWith(s) ? name.slice(0, -s.length) : undefined)).find(
      (b) => b !== undefined && families.has(b) && families.get(b)!.type !== "untyped",
    );
    family(base ?? name).samples.push({ name, labels, value });
  }
  return families;
}

/** The sum of the values of `family`'s samples named `sample` (default the family's name) whose labels include `labels`. */
export function sumSamples(
  families: ReadonlyMap<string, PrometheusFamily>,
  family: string,
  labels: Readonly<Record<string, string>> = {},
  sample = family,
): number {
  let sum = 0;
  for (const s of families.get(family)?.samples ?? []) {
    if (s.name !== sample) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}
