// A small hand-written SVG line chart (no dependency): p50 latency vs concurrency, log–log axes.
export interface Series {
  label: string;
  color: string;
  /** [concurrency, p50 ms] */
  points: [number, number][];
  dashed?: boolean;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n >= 1 ? n.toFixed(2) : n.toFixed(3));
const tickLabel = (v: number) => (v >= 1 ? String(v) : String(Number(v.toPrecision(1))));

/** p50 (ms, log axis) against clients (log2 axis); `notes` are extra legend lines (e.g. off-chart paths). */
export function latencySvg(options: { title: string; subtitle?: string; series: Series[]; notes?: string[] }): string {
  const series = options.series.filter((s) => s.points.some(([, y]) => Number.isFinite(y) && y > 0));
  const xs = [...new Set(series.flatMap((s) => s.points.map(([x]) => x)))].sort((a, b) => a - b);
  const ys = series.flatMap((s) => s.points.map(([, y]) => y)).filter((y) => Number.isFinite(y) && y > 0);
  const width = 900;
  const height = 480;
  const m = { left: 78, right: 330, top: 64, bottom: 64 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const lo = Math.floor(Math.log10(Math.min(...ys, 1)));
  const hi = Math.ceil(Math.log10(Math.max(...ys, 1)));
  const yTop = hi === lo ? hi + 1 : hi;
  const xMin = Math.log2(Math.max(1, xs[0] ?? 1));
  const xMax = Math.log2(Math.max(2, xs[xs.length - 1] ?? 2));
  const X = (c: number) => m.left + ((Math.log2(c) - xMin) / (xMax - xMin || 1)) * plotW;
  const Y = (ms: number) => m.top + plotH - ((Math.log10(ms) - lo) / (yTop - lo)) * plotH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${m.left}" y="24" font-size="16" font-weight="bold">${esc(options.title)}</text>`);
  if (options.subtitle) out.push(`<text x="${m.left}" y="44" fill="#555">${esc(options.subtitle)}</text>`);
  // Y grid: decades labelled, 2 and 5 as minor lines.
  for (let d = lo; d <= yTop; d++) {
    const v = 10 ** d;
    out.push(
      `<line x1="${m.left}" x2="${m.left + plotW}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" stroke="#ccc"/>`,
    );
    out.push(`<text x="${m.left - 8}" y="${(Y(v) + 4).toFixed(1)}" text-anchor="end">${tickLabel(v)}</text>`);
    if (d < yTop)
      for (const k of [2, 5])
        out.push(
          `<line x1="${m.left}" x2="${m.left + plotW}" y1="${Y(k * v).toFixed(1)}" y2="${Y(k * v).toFixed(1)}" ` +
            `stroke="#eee"/>`,
        );
  }
  for (const c of xs) {
    out.push(
      `<line x1="${X(c).toFixed(1)}" x2="${X(c).toFixed(1)}" y1="${m.top}" y2="${m.top + plotH}" stroke="#eee"/>`,
    );
    out.push(`<text x="${X(c).toFixed(1)}" y="${m.top + plotH + 18}" text-anchor="middle">${c}</text>`);
  }
  out.push(`<rect x="${m.left}" y="${m.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  out.push(
    `<text x="${m.left + plotW / 2}" y="${height - 18}" text-anchor="middle">concurrent clients (log scale)</text>`,
  );
  out.push(
    `<text transform="translate(22 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">p50 latency, ms (log ` +
      `scale)</text>`,
  );
  for (const s of series) {
    const pts = s.points.filter(([, y]) => Number.isFinite(y) && y > 0);
    const d = pts.map(([x, y], i) => `${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ');
    out.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    for (const [x, y] of pts) {
      // Values are in the legend (labels at the points would collide where the lines meet).
      out.push(
        `<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="4" ` +
          `fill="${s.color}"><title>${esc(`${s.label}: ${num(y)} ms at ${x}`)}</title></circle>`,
      );
    }
  }
  // Legend, right of the plot.
  const lx = m.left + plotW + 24;
  let ly = m.top + 8;
  out.push(`<text x="${lx}" y="${ly}" font-weight="bold">p50 ms at ${xs.join(' / ')} clients</text>`);
  ly += 22;
  for (const s of series) {
    out.push(
      `<line x1="${lx}" x2="${lx + 26}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" ` +
        `stroke-width="2.5"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    out.push(`<text x="${lx + 34}" y="${ly}">${esc(s.label)}</text>`);
    out.push(
      `<text x="${lx + 34}" y="${ly + 15}" fill="#555" ` +
        `font-size="11">${esc(s.points.map(([, y]) => num(y)).join(' / '))}</text>`,
    );
    ly += 38;
  }
  for (const note of options.notes ?? []) {
    out.push(`<text x="${lx}" y="${ly}" fill="#555" font-size="11">${esc(note)}</text>`);
    ly += 16;
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
