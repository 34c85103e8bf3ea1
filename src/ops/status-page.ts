// The status page served at GET /: one self-contained HTML document (inline CSS, one small inline script,
// no external assets, no build step). The server renders the first view; the script then fetches
// `status.json` (the same snapshot as JSON, served next to the page) every 2 s and re-renders the
// upstreams, the cache and the denials in place. Without JavaScript a <noscript> meta refresh reloads the
// page instead. Every value is HTML-escaped on both sides: server names, errors and policy rules come from
// configs and upstreams. A Content-Security-Policy (also exported for use as a header) allows only that
// one script and style and connections to the page's own origin.
import { createHash } from 'node:crypto';
import { SLOT_MS, SLOTS } from './recent-window.js';
import { TRAFFIC_COLUMNS, TRAFFIC_SCRIPT, TRAFFIC_STYLE, trafficRows, type TrafficSnapshot } from './status-charts.js';

export interface StatusSnapshot {
  version: string;
  startedAt: string;
  uptimeSeconds: number;
  upstreams: {
    name: string;
    transport: 'stdio' | 'http' | 'sse' | 'openapi';
    era: string | undefined;
    state: string;
    restarts: number;
    toolCount: number | undefined;
    /**
     * A server reached with each caller's own credential (an OAuth token, or pasted values): how many
     * principals have one stored. Never who, never the credential. Absent for any other server.
     */
    connected?: number | undefined;
    lastError: string | undefined;
    /** A stdio server's sandbox in a few words (docs/sandbox.md), with the host's tier; `off` when bare. */
    sandbox?: string;
    /** A pooled server's children (instances), each as "#index state", e.g. "#0 ready, #1 backing-off". */
    children?: string;
  }[];
  /** hitRate is hits / (hits + misses) in 0..1, undefined before the first lookup. */
  cache: { hits: number; misses: number; hitRate: number | undefined };
  /** Shown in the order given (newest first reads best). */
  recentDenials: { time: string; principal: string; method: string; target: string | undefined; rule: string }[];
  /** Each upstream's recent calls, drawn as charts; absent from a snapshot made without metrics. */
  traffic?: TrafficSnapshot;
}

/** How often the page's script fetches status.json. */
export const STATUS_REFRESH_MS = 2_000;

const DASH = '\u2014';

const UPSTREAM_COLUMNS = [
  ['name', 'Server'],
  ['transport', 'Transport'],
  ['era', 'Era'],
  ['state', 'State'],
  ['restarts', 'Restarts'],
  ['toolCount', 'Tools'],
  ['connected', 'Connected'],
  ['children', 'Children'],
  ['sandbox', 'Sandbox'],
  ['lastError', 'Last error'],
] as const;

const DENIAL_COLUMNS = [
  ['time', 'Time'],
  ['principal', 'Principal'],
  ['method', 'Method'],
  ['target', 'Target'],
  ['rule', 'Rule'],
] as const;

const NO_UPSTREAMS = 'No upstreams configured.';
const NO_DENIALS = 'No denials recorded.';

// ---- formatting (the script below formats the same way; the browser test checks they agree) -------

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for element content and for double- or single-quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function shown(value: unknown): string {
  return value === undefined || value === null || value === '' ? DASH : String(value);
}

function percent(rate: number | undefined): string {
  return typeof rate === 'number' && Number.isFinite(rate) ? `${(rate * 100).toFixed(1)}%` : DASH;
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return DASH;
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  const two = (n: number) => String(n).padStart(2, '0');
  if (d) return `${d}d ${h}h ${two(m)}m ${two(s % 60)}s`;
  if (h) return `${h}h ${two(m)}m ${two(s % 60)}s`;
  if (m) return `${m}m ${two(s % 60)}s`;
  return `${s % 60}s`;
}

function cell(field: string, value: unknown): string {
  return `<td data-field="${field}">${escapeHtml(shown(value))}</td>`;
}

function upstreamRows(upstreams: StatusSnapshot['upstreams']): string {
  if (upstreams.length === 0)
    return `<tr class="empty"><td colspan="${UPSTREAM_COLUMNS.length}">${NO_UPSTREAMS}</td></tr>`;
  return upstreams
    .map((u) => {
      const cells = UPSTREAM_COLUMNS.map(([field]) => cell(field, u[field])).join('');
      return `<tr data-upstream="${escapeHtml(u.name)}" data-state="${escapeHtml(u.state)}">${cells}</tr>`;
    })
    .join('\n');
}

function denialRows(denials: StatusSnapshot['recentDenials']): string {
  if (denials.length === 0) return `<tr class="empty"><td colspan="${DENIAL_COLUMNS.length}">${NO_DENIALS}</td></tr>`;
  return denials
    .map((d) => `<tr data-denial>${DENIAL_COLUMNS.map(([field]) => cell(field, d[field])).join('')}</tr>`)
    .join('\n');
}

function headings(columns: readonly (readonly [string, string])[]): string {
  return columns.map(([field, label]) => `<th scope="col" data-column="${field}">${label}</th>`).join('');
}

// ---- the script: fetch status.json, re-render the same markup -----------------------------------

const SCRIPT = `
(() => {
  'use strict';
  const INTERVAL_MS = ${STATUS_REFRESH_MS};
  const DASH = ${JSON.stringify(DASH)};
  const UPSTREAM_FIELDS = ${JSON.stringify(UPSTREAM_COLUMNS.map(([field]) => field))};
  const DENIAL_FIELDS = ${JSON.stringify(DENIAL_COLUMNS.map(([field]) => field))};
  const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  const esc = (v) => String(v).replace(/[&<>"']/g, (c) => ESCAPES[c]);
  const shown = (v) => (v === undefined || v === null || v === '' ? DASH : String(v));
  const percent = (r) => (typeof r === 'number' && Number.isFinite(r) ? (r * 100).toFixed(1) + '%' : DASH);
  const two = (n) => String(n).padStart(2, '0');
  const duration = (x) => {
    if (typeof x !== 'number' || !Number.isFinite(x)) return DASH;
    const s = Math.max(0, Math.floor(x));
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    if (d) return d + 'd ' + h + 'h ' + two(m) + 'm ' + two(s % 60) + 's';
    if (h) return h + 'h ' + two(m) + 'm ' + two(s % 60) + 's';
    if (m) return m + 'm ' + two(s % 60) + 's';
    return (s % 60) + 's';
  };
  const cell = (field, value) => '<td data-field="' + field + '">' + esc(shown(value)) + '</td>';
  const list = (value) => (Array.isArray(value) ? value : []);
  const rows = (items, fields, empty, row) =>
    items.length === 0
      ? '<tr class="empty"><td colspan="' + fields.length + '">' + empty + '</td></tr>'
      : items.map((item) => row(item, fields.map((f) => cell(f, item[f])).join(''))).join('\\n');
${TRAFFIC_SCRIPT}
  const text = (selector, value) => {
    const element = document.querySelector(selector);
    if (element) element.textContent = value;
  };

  function render(s) {
    text('[data-field="version"]', shown(s.version));
    text('[data-field="startedAt"]', shown(s.startedAt));
    text('[data-field="uptime"]', duration(s.uptimeSeconds));
    document.getElementById('upstreams').innerHTML = rows(list(s.upstreams), UPSTREAM_FIELDS,
      ${JSON.stringify(NO_UPSTREAMS)},
      (u, cells) => '<tr data-upstream="' + esc(u.name) + '" data-state="' + esc(u.state) + '">' + cells + '</tr>');
    const cache = s.cache || {};
    text('[data-field="hitRate"]', percent(cache.hitRate));
    text('[data-field="hits"]', shown(cache.hits));
    text('[data-field="misses"]', shown(cache.misses));
    document.getElementById('traffic').innerHTML = trafficRows(s.traffic);
    document.getElementById('denials').innerHTML = rows(list(s.recentDenials), DENIAL_FIELDS,
      ${JSON.stringify(NO_DENIALS)},
      (d, cells) => '<tr data-denial>' + cells + '</tr>');
  }

  let refreshes = 0;
  async function refresh() {
    try {
      const response = await fetch('status.json',
        { cache: 'no-store', credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error('status.json answered ' + response.status);
      render(await response.json());
      document.body.dataset.refreshes = String(++refreshes);
      delete document.body.dataset.stale;
      text('#live', 'live, updated ' + new Date().toLocaleTimeString());
    } catch (error) {
      document.body.dataset.stale = 'true';
      text('#live', 'not updated: ' + (error && error.message ? error.message : String(error)));
    } finally {
      setTimeout(refresh, INTERVAL_MS);
    }
  }
  setTimeout(refresh, INTERVAL_MS);
})();
`;

const STYLE = `
:root { color-scheme: light dark; --line: #8884; --muted: #888; --ok: #1a7f37; --warn: #b08800; --bad: #cf222e; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
  padding: 1rem 1.5rem 3rem; max-width: 80rem; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 1.75rem 0 .5rem; }
header p { margin: 0; color: var(--muted); }
body[data-stale] #live { color: var(--bad); font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; white-space: nowrap; }
td[data-field="restarts"], td[data-field="toolCount"], td[data-field="connected"] {
  text-align: right; font-variant-numeric: tabular-nums; }
td[data-field="lastError"], td[data-field="rule"], td[data-field="target"] {
  font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap;
  overflow-wrap: anywhere; max-width: 36rem; }
tr.empty td { color: var(--muted); font-style: italic; }
tr[data-state] td[data-field="state"] { font-weight: 600; }
tr[data-state="ready"] td[data-field="state"] { color: var(--ok); }
tr[data-state="starting"] td[data-field="state"],
tr[data-state="backing-off"] td[data-field="state"] { color: var(--warn); }
tr[data-state="unhealthy"] td[data-field="state"],
tr[data-state="stopped"] td[data-field="state"] { color: var(--bad); }
dl#cache { display: grid; grid-template-columns: max-content max-content; gap: .2rem 1.5rem; margin: 0; }
dl#cache dt { color: var(--muted); }
dl#cache dd { margin: 0; font-variant-numeric: tabular-nums; }
${TRAFFIC_STYLE}`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The page's Content-Security-Policy, also set in the page by a <meta> tag: only its own script and style,
 * fetches to its own origin, images (a browser's own /favicon.ico) from it, nothing else. Send it as a
 * header too, to add frame-ancestors (which a meta tag cannot carry): `${STATUS_PAGE_CSP}; frame-ancestors 'none'`.
 */
export const STATUS_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The whole status page for one snapshot: a complete HTML document, every value escaped. */
export function renderStatusPage(snapshot: StatusSnapshot): string {
  const { cache } = snapshot;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(STATUS_PAGE_CSP)}">
<meta name="referrer" content="no-referrer">
<title>mcp-gateway status</title>
<noscript><meta http-equiv="refresh" content="${STATUS_REFRESH_MS / 1000}"></noscript>
<style>${STYLE}</style>
</head>
<body data-refreshes="0">
<header>
<h1>mcp-gateway</h1>
<p>version <span data-field="version">${escapeHtml(
    shown(snapshot.version),
  )}</span> · started <span data-field="startedAt">${escapeHtml(
    shown(snapshot.startedAt),
  )}</span> · up <span data-field="uptime">${escapeHtml(
    duration(snapshot.uptimeSeconds),
  )}</span> · <span id="live">refreshes every ${STATUS_REFRESH_MS / 1000} s</span></p>
</header>
<main>
${tableSection('upstreams', 'Upstreams', UPSTREAM_COLUMNS, upstreamRows(snapshot.upstreams))}
${tableSection(
  'traffic',
  `Traffic, last ${(SLOTS * SLOT_MS) / 60_000} min`,
  TRAFFIC_COLUMNS,
  trafficRows(snapshot.traffic),
)}
<section aria-labelledby="cache-heading">
<h2 id="cache-heading">Cache</h2>
<dl id="cache">
<dt>Hit rate</dt><dd data-field="hitRate">${escapeHtml(percent(cache.hitRate))}</dd>
<dt>Hits</dt><dd data-field="hits">${escapeHtml(shown(cache.hits))}</dd>
<dt>Misses</dt><dd data-field="misses">${escapeHtml(shown(cache.misses))}</dd>
</dl>
</section>
${tableSection('denials', 'Recent denials', DENIAL_COLUMNS, denialRows(snapshot.recentDenials))}
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** A titled table whose body the page's script refreshes by id. */
function tableSection(
  id: string,
  title: string,
  columns: readonly (readonly [string, string])[],
  rows: string,
): string {
  return `<section aria-labelledby="${id}-heading">
<h2 id="${id}-heading">${title}</h2>
<table>
<thead><tr>${headings(columns)}</tr></thead>
<tbody id="${id}">
${rows}
</tbody>
</table>
</section>`;
}
