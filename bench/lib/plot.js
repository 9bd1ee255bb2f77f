// Draws a benchmark result (see results.js) as an SVG of horizontal bars: a
// block per group, a bar per contender at its median, a whisker from its min
// to its max, the value written beside it. Plain SVG text, no dependencies,
// so the file renders wherever the repository is read and diffs as text.

const PALETTE = ["#2563eb", "#d97706", "#059669", "#7c3aed", "#dc2626", "#0891b2", "#65a30d", "#db2777"];
const PLOT = 400; // the bars' width at the axis's end
const VALUE = 110; // the values' column at the right
const CHAR = 6.8; // about the width of a 12px character
const BAR = 16;
const GAP = 6;

const escape = (text) =>
  String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

/** 3 significant digits, without exponent for the magnitudes benchmarks produce. */
export function formatValue(value) {
  if (value === 0) return "0";
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
  return value.toLocaleString("en-US", { maximumFractionDigits: Math.min(digits, 3) });
}

/** Round tick steps (1, 2, 5 times a power of ten) over 0..max, about five of them. */
function ticks(max) {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? rough;
  const out = [0];
  while (out[out.length - 1] < max) out.push(Number((out.length * step).toPrecision(12)));
  return out;
}

/** The SVG text of `result`. */
export function renderSvg(result) {
  const contenders = [...new Set(result.groups.flatMap((g) => g.bars.map((b) => b.label)))];
  const color = (label) => PALETTE[contenders.indexOf(label) % PALETTE.length];
  const top = 58;
  const rows = result.groups.reduce((n, g) => n + 1 + g.bars.length, 0);
  const plotHeight = rows * (BAR + GAP) + result.groups.length * 6;
  const height = top + plotHeight + (result.note ? 60 : 46);
  const longest = Math.max(...result.groups.flatMap((g) => g.bars.map((b) => String(b.label).length)));
  const x0 = Math.max(140, Math.ceil(longest * CHAR) + 24);
  const plotWidth = PLOT;
  const valueChars = Math.max(
    ...result.groups.flatMap((g) => g.bars.map((b) => `${formatValue(b.median)} ${result.unit}`.length)),
  );
  const WIDTH = x0 + PLOT + Math.max(VALUE, Math.ceil(valueChars * CHAR) + 20);
  const scaleTicks = ticks(Math.max(...result.groups.flatMap((g) => g.bars.map((b) => b.max ?? b.median))));
  const axisMax = scaleTicks[scaleTicks.length - 1] || 1;
  const x = (v) => x0 + (v / axisMax) * plotWidth;

  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600" fill="#111827">${escape(result.title)}</text>`,
    `<text x="12" y="40" fill="#4b5563">${escape(`${result.unit}, ${result.lowerIsBetter ? "lower" : "higher"} is better; bar: median, whisker: min to max${result.groups[0]?.bars[0]?.runs ? ` of ${result.groups[0].bars[0].runs.length} rounds` : ""}`)}</text>`,
  ];
  for (const t of scaleTicks) {
    parts.push(
      `<line x1="${x(t).toFixed(1)}" y1="${top - 4}" x2="${x(t).toFixed(1)}" y2="${top + plotHeight}" stroke="#e5e7eb"/>`,
      `<text x="${x(t).toFixed(1)}" y="${top + plotHeight + 14}" text-anchor="middle" fill="#6b7280">${escape(formatValue(t))}</text>`,
    );
  }
  let y = top;
  for (const group of result.groups) {
    parts.push(
      `<text x="12" y="${y + BAR - 3}" font-weight="600" fill="#111827">${escape(group.label)}</text>`,
    );
    y += BAR + GAP;
    for (const bar of group.bars) {
      const mid = y + BAR / 2;
      parts.push(
        `<text x="${x0 - 8}" y="${y + BAR - 4}" text-anchor="end" fill="#374151">${escape(bar.label)}</text>`,
        `<rect x="${x0}" y="${y}" width="${Math.max(1, x(bar.median) - x0).toFixed(1)}" height="${BAR}" rx="2" fill="${color(bar.label)}" fill-opacity="0.85"/>`,
      );
      if (bar.min !== undefined && bar.max !== undefined && bar.max > bar.min) {
        parts.push(
          `<line x1="${x(bar.min).toFixed(1)}" y1="${mid}" x2="${x(bar.max).toFixed(1)}" y2="${mid}" stroke="#111827"/>`,
          `<line x1="${x(bar.min).toFixed(1)}" y1="${mid - 4}" x2="${x(bar.min).toFixed(1)}" y2="${mid + 4}" stroke="#111827"/>`,
          `<line x1="${x(bar.max).toFixed(1)}" y1="${mid - 4}" x2="${x(bar.max).toFixed(1)}" y2="${mid + 4}" stroke="#111827"/>`,
        );
      }
      parts.push(
        `<text x="${x0 + PLOT + 12}" y="${y + BAR - 4}" fill="#111827">${escape(`${formatValue(bar.median)} ${result.unit}`)}</text>`,
      );
      y += BAR + GAP;
    }
    y += 6;
  }
  const footer = [
    `${result.machine ?? ""}${result.date ? `, ${result.date.slice(0, 10)}` : ""}`,
    result.note,
  ];
  for (const [i, line] of footer.filter(Boolean).entries()) {
    parts.push(
      `<text x="12" y="${top + plotHeight + 34 + i * 14}" font-size="11" fill="#6b7280">${escape(line)}</text>`,
    );
  }
  parts.push(`</svg>`);
  return parts.join("\n") + "\n";
}
