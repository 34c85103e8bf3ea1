// The status page's traffic section: per upstream, its calls, error rate and latency over the recent window
// (recent-window.ts), with two small inline SVG charts — p95 latency per slot as a line, error rate per slot
// as bars. Drawn by the server for the first view and by the page's script on every refresh; the two
// renderers below are the same code in TypeScript and in the script's JavaScript (the browser test checks
// the script's output). Colours come from the page's stylesheet (classes), as its CSP allows no inline style.
import type { RecentPoint, RecentTraffic } from './recent-window.js';

export interface TrafficSnapshot {
  /** Width of one chart point, in seconds. */
  slotSeconds: number;
  upstreams: (RecentTraffic & { name: string })[];
}

const WIDTH = 150;
/** The plot's height; below it a band for the time axis's labels. */
const HEIGHT = 28;
const AXIS = 12;
const DASH = '\u2014';

export const TRAFFIC_COLUMNS = [
  ['name', 'Server'],
  ['calls', 'Calls'],
  ['errorRate', 'Error rate'],
  ['meanMs', 'Mean'],
  ['p95Ms', 'p95'],
  ['latencyChart', 'p95 latency'],
  ['errorChart', 'Errors'],
] as const;

export const NO_TRAFFIC = 'No upstreams configured.';

export const TRAFFIC_STYLE = `
svg.spark { display: block; overflow: visible; }
svg.spark rect.plot { fill: #8881; }
svg.spark line.axis { stroke: var(--line); stroke-width: 1; }
svg.spark text.axis { font-size: 8px; fill: currentColor; opacity: 0.7; }
svg.spark path { fill: none; stroke: var(--ok); stroke-width: 1.5; }
svg.spark circle { fill: var(--ok); }
svg.spark rect.ok { fill: var(--line); }
svg.spark rect.bad { fill: var(--bad); }
td[data-field="calls"], td[data-field="errorRate"], td[data-field="meanMs"], td[data-field="p95Ms"] {
  text-align: right; font-variant-numeric: tabular-nums; }
`;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (value: unknown): string => String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
const ms = (v: number | undefined): string =>
  typeof v === 'number' && Number.isFinite(v) ? (v >= 100 ? String(Math.round(v)) : v.toFixed(1)) + ' ms' : DASH;
const sparkOpen = (chart: string, drawn: number, extra: string, label: string): string =>
  '<svg class="spark" data-chart="' +
  chart +
  '" data-points="' +
  drawn +
  '"' +
  extra +
  ' viewBox="0 0 ' +
  WIDTH +
  ' ' +
  (HEIGHT + AXIS) +
  '" width="' +
  WIDTH +
  '" height="' +
  (HEIGHT + AXIS) +
  '" role="img" aria-label="' +
  esc(label) +
  '"><rect class="plot" x="0" y="0" width="' +
  WIDTH +
  '" height="' +
  HEIGHT +
  '"></rect>';
/** How long ago the chart's first slot began, as its time axis says it. */
const ago = (seconds: number): string =>
  '\u2212' +
  (seconds < 120
    ? Math.round(seconds) + ' s'
    : seconds < 7200
      ? Math.round(seconds / 60) + ' min'
      : Math.round(seconds / 3600) + ' h');
/** The axes: the value at the plot's top (its scale), the base line, and the time span from its left edge to now. */
const axes = (top: string, spanSeconds: number): string =>
  '<line class="axis" x1="0" y1="' +
  HEIGHT +
  '" x2="' +
  WIDTH +
  '" y2="' +
  HEIGHT +
  '"></line><text class="axis" data-axis="max" x="2" y="9">' +
  esc(top) +
  '</text><text class="axis" data-axis="from" x="0" y="' +
  (HEIGHT + AXIS - 3) +
  '">' +
  esc(ago(spanSeconds)) +
  '</text><text class="axis" data-axis="to" x="' +
  WIDTH +
  '" y="' +
  (HEIGHT + AXIS - 3) +
  '" text-anchor="end">now</text>';
const percent = (r: number | undefined): string =>
  typeof r === 'number' && Number.isFinite(r) ? (r * 100).toFixed(1) + '%' : DASH;

/** p95 latency per slot as a line (broken where a slot had no calls), a dot on every slot that had some. */
export function latencyChart(points: readonly RecentPoint[], slotSeconds: number): string {
  const values = points.map((p) => p.p95Ms);
  const max = Math.max(1, ...values.filter((v): v is number => typeof v === 'number'));
  const step = WIDTH / Math.max(1, points.length - 1);
  let d = '';
  let dots = '';
  let drawn = 0;
  let pen = false;
  values.forEach((v, i) => {
    if (typeof v !== 'number') {
      pen = false;
      return;
    }
    const x = (i * step).toFixed(1);
    const y = (HEIGHT - 1 - (v / max) * (HEIGHT - 2)).toFixed(1);
    d += (pen ? 'L' : 'M') + x + ' ' + y;
    dots += '<circle cx="' + x + '" cy="' + y + '" r="1.5"></circle>';
    pen = true;
    drawn++;
  });
  return (
    sparkOpen('latency', drawn, '', 'p95 latency per slot, highest ' + ms(drawn ? max : undefined)) +
    axes(ms(drawn ? max : undefined), points.length * slotSeconds) +
    '<path d="' +
    d +
    '"></path>' +
    dots +
    '</svg>'
  );
}

/** Error rate per slot as bars: a thin grey bar for a slot without errors, a red one as tall as its rate. */
export function errorChart(points: readonly RecentPoint[], slotSeconds: number): string {
  const bar = WIDTH / Math.max(1, points.length);
  let bars = '';
  let drawn = 0;
  let errors = 0;
  points.forEach((p, i) => {
    if (!p.calls) return;
    const rate = p.errors / p.calls;
    const h = rate > 0 ? Math.max(2, rate * (HEIGHT - 1)) : 1;
    bars +=
      '<rect class="' +
      (rate > 0 ? 'bad' : 'ok') +
      '" x="' +
      (i * bar).toFixed(1) +
      '" y="' +
      (HEIGHT - h).toFixed(1) +
      '" width="' +
      Math.max(1, bar - 1).toFixed(1) +
      '" height="' +
      h.toFixed(1) +
      '"></rect>';
    drawn++;
    errors += p.errors;
  });
  return (
    sparkOpen('errors', drawn, ' data-errors="' + errors + '"', errors + ' errors') +
    axes('100%', points.length * slotSeconds) +
    bars +
    '</svg>'
  );
}

/** The traffic table's rows. */
export function trafficRows(traffic: TrafficSnapshot | undefined): string {
  const upstreams = traffic?.upstreams ?? [];
  if (upstreams.length === 0)
    return '<tr class="empty"><td colspan="' + TRAFFIC_COLUMNS.length + '">' + NO_TRAFFIC + '</td></tr>';
  return upstreams
    .map((u) => {
      const cells = [
        '<td data-field="name">' + esc(u.name) + '</td>',
        '<td data-field="calls">' + esc(u.calls) + '</td>',
        '<td data-field="errorRate">' + esc(percent(u.errorRate)) + '</td>',
        '<td data-field="meanMs">' + esc(ms(u.meanMs)) + '</td>',
        '<td data-field="p95Ms">' + esc(ms(u.p95Ms)) + '</td>',
        '<td data-field="latencyChart">' + latencyChart(u.points, traffic!.slotSeconds) + '</td>',
        '<td data-field="errorChart">' + errorChart(u.points, traffic!.slotSeconds) + '</td>',
      ];
      return '<tr data-traffic="' + esc(u.name) + '">' + cells.join('') + '</tr>';
    })
    .join('\n');
}

/**
 * The same renderers in the page's script (plain JavaScript, as the page has no build step): defines
 * `trafficRows(traffic)` there, using the script's own `esc`. Keep it in step with the functions above.
 */
export const TRAFFIC_SCRIPT = `
  const TRAFFIC_COLUMN_COUNT = ${TRAFFIC_COLUMNS.length};
  const ms = (v) =>
    (typeof v === 'number' && Number.isFinite(v) ? (v >= 100 ? String(Math.round(v)) : v.toFixed(1)) + ' ms' : DASH);
  const sparkOpen = (chart, drawn, extra, label) =>
    '<svg class="spark" data-chart="' + chart + '" data-points="' + drawn + '"' + extra +
    ' viewBox="0 0 ${WIDTH} ${HEIGHT + AXIS}" width="${WIDTH}" height="${HEIGHT + AXIS}" role="img" aria-label="' +
    esc(label) + '"><rect class="plot" x="0" y="0" width="${WIDTH}" height="${HEIGHT}"></rect>';
  const ago = (seconds) => '\\u2212' +
    (seconds < 120 ? Math.round(seconds) + ' s' : seconds < 7200 ? Math.round(seconds / 60) + ' min' :
      Math.round(seconds / 3600) + ' h');
  const axes = (top, spanSeconds) => '<line class="axis" x1="0" y1="${HEIGHT}" x2="${WIDTH}" ' +
    'y2="${HEIGHT}"></line><text class="axis" data-axis="max" x="2" y="9">' + esc(top) +
    '</text><text class="axis" data-axis="from" x="0" y="${HEIGHT + AXIS - 3}">' + esc(ago(spanSeconds)) +
    '</text><text class="axis" data-axis="to" x="${WIDTH}" y="${HEIGHT + AXIS - 3}" text-anchor="end">now</text>';
  function latencyChart(points, slotSeconds) {
    const values = points.map((p) => p.p95Ms);
    const max = Math.max(1, ...values.filter((v) => typeof v === 'number'));
    const step = ${WIDTH} / Math.max(1, points.length - 1);
    let d = '', dots = '', drawn = 0, pen = false;
    values.forEach((v, i) => {
      if (typeof v !== 'number') { pen = false; return; }
      const x = (i * step).toFixed(1), y = (${HEIGHT} - 1 - (v / max) * (${HEIGHT} - 2)).toFixed(1);
      d += (pen ? 'L' : 'M') + x + ' ' + y;
      dots += '<circle cx="' + x + '" cy="' + y + '" r="1.5"></circle>';
      pen = true;
      drawn++;
    });
    return sparkOpen('latency', drawn, '', 'p95 latency per slot, highest ' + ms(drawn ? max : undefined)) +
      axes(ms(drawn ? max : undefined), points.length * slotSeconds) +
      '<path d="' + d + '"></path>' + dots + '</svg>';
  }
  function errorChart(points, slotSeconds) {
    const bar = ${WIDTH} / Math.max(1, points.length);
    let bars = '', drawn = 0, errors = 0;
    points.forEach((p, i) => {
      if (!p.calls) return;
      const rate = p.errors / p.calls;
      const h = rate > 0 ? Math.max(2, rate * (${HEIGHT} - 1)) : 1;
      bars += '<rect class="' + (rate > 0 ? 'bad' : 'ok') + '" x="' + (i * bar).toFixed(1) +
        '" y="' + (${HEIGHT} - h).toFixed(1) + '" width="' + Math.max(1, bar - 1).toFixed(1) +
        '" height="' + h.toFixed(1) + '"></rect>';
      drawn++;
      errors += p.errors;
    });
    return sparkOpen('errors', drawn, ' data-errors="' + errors + '"', errors + ' errors') +
      axes('100%', points.length * slotSeconds) + bars + '</svg>';
  }
  function trafficRows(traffic) {
    const upstreams = traffic && Array.isArray(traffic.upstreams) ? traffic.upstreams : [];
    if (upstreams.length === 0) return '<tr class="empty"><td colspan="' + TRAFFIC_COLUMN_COUNT + '">' +
      ${JSON.stringify(NO_TRAFFIC)} + '</td></tr>';
    return upstreams.map((u) => '<tr data-traffic="' + esc(u.name) + '">' +
      '<td data-field="name">' + esc(u.name) + '</td>' +
      '<td data-field="calls">' + esc(u.calls) + '</td>' +
      '<td data-field="errorRate">' + esc(percent(u.errorRate)) + '</td>' +
      '<td data-field="meanMs">' + esc(ms(u.meanMs)) + '</td>' +
      '<td data-field="p95Ms">' + esc(ms(u.p95Ms)) + '</td>' +
      '<td data-field="latencyChart">' + latencyChart(list(u.points), traffic.slotSeconds) + '</td>' +
      '<td data-field="errorChart">' + errorChart(list(u.points), traffic.slotSeconds) + '</td></tr>').join('\\n');
  }
`;
