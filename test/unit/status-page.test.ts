import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import vm from 'node:vm';
import { escapeHtml, renderStatusPage, STATUS_PAGE_CSP, type StatusSnapshot } from '../../src/ops/status-page.js';

const snapshot = (over: Partial<StatusSnapshot> = {}): StatusSnapshot => ({
  version: '0.1.0',
  startedAt: '2026-08-01T10:00:00.000Z',
  uptimeSeconds: 3_725,
  upstreams: [
    {
      name: 'files',
      transport: 'stdio',
      era: 'modern',
      state: 'ready',
      restarts: 0,
      toolCount: 9,
      lastError: undefined,
    },
    {
      name: 'old-http',
      transport: 'http',
      era: 'legacy',
      state: 'backing-off',
      restarts: 2,
      toolCount: undefined,
      lastError: 'connect ECONNREFUSED 127.0.0.1:9',
    },
  ],
  cache: { hits: 3, misses: 1, hitRate: 0.75 },
  recentDenials: [
    {
      time: '2026-08-01T10:01:00.000Z',
      principal: 'alice',
      method: 'tools/call',
      target: 'files__delete',
      rule: 'policy team: deny tools files__*',
    },
  ],
  ...over,
});

/** The text of every `data-field` cell of one upstream row, by field. */
function row(html: string, name: string): Record<string, string> {
  const match = new RegExp(`<tr data-upstream="${name}"[^>]*>(.*?)</tr>`).exec(html);
  assert.ok(match, `no row for ${name}`);
  return Object.fromEntries([...match[1]!.matchAll(/<td data-field="(\w+)">(.*?)<\/td>/g)].map((m) => [m[1]!, m[2]!]));
}

const field = (html: string, name: string) => new RegExp(`data-field="${name}">([^<]*)<`).exec(html)?.[1];
const tbody = (html: string, id: string) => new RegExp(`<tbody id="${id}">\\n([\\s\\S]*?)\\n</tbody>`).exec(html)?.[1];
const inline = (html: string, tag: string) => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)![1]!;

test('a complete HTML document with every upstream in its own row, in the order given', () => {
  const html = renderStatusPage(snapshot());
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assert.match(html, /<\/html>\n$/);
  assert.match(html, /<title>mcp-gateway status<\/title>/);
  assert.deepEqual(row(html, 'files'), {
    name: 'files',
    transport: 'stdio',
    era: 'modern',
    state: 'ready',
    restarts: '0',
    toolCount: '9',
    connected: '—',
    children: '—',
    sandbox: '—',
    lastError: '—',
  });
  assert.deepEqual(row(html, 'old-http'), {
    name: 'old-http',
    transport: 'http',
    era: 'legacy',
    state: 'backing-off',
    restarts: '2',
    toolCount: '—',
    connected: '—',
    children: '—',
    sandbox: '—',
    lastError: 'connect ECONNREFUSED 127.0.0.1:9',
  });
  assert.ok(html.indexOf('data-upstream="files"') < html.indexOf('data-upstream="old-http"'));
  assert.match(html, /<tr data-upstream="old-http" data-state="backing-off">/);
});

test('header, cache and denials', () => {
  const html = renderStatusPage(snapshot());
  assert.equal(field(html, 'version'), '0.1.0');
  assert.equal(field(html, 'startedAt'), '2026-08-01T10:00:00.000Z');
  assert.equal(field(html, 'uptime'), '1h 02m 05s');
  assert.equal(field(html, 'hitRate'), '75.0%');
  assert.equal(field(html, 'hits'), '3');
  assert.equal(field(html, 'misses'), '1');
  const denial = /<tr data-denial>(.*?)<\/tr>/.exec(html)![1]!;
  assert.equal(
    denial,
    '<td data-field="time">2026-08-01T10:01:00.000Z</td><td data-field="principal">alice</td><td ' +
      'data-field="method">tools/call</td>' +
      '<td data-field="target">files__delete</td><td data-field="rule">policy team: deny tools files__*</td>',
  );
});

test('uptime reads in days, hours, minutes and seconds', () => {
  const uptime = (seconds: number) => field(renderStatusPage(snapshot({ uptimeSeconds: seconds })), 'uptime');
  assert.equal(uptime(0), '0s');
  assert.equal(uptime(59.9), '59s');
  assert.equal(uptime(61), '1m 01s');
  assert.equal(uptime(90_061), '1d 1h 01m 01s');
  assert.equal(uptime(-5), '0s');
  assert.equal(uptime(Number.NaN), '—');
});

test('empty states: no upstreams, no cache lookups, no denials', () => {
  const html = renderStatusPage(
    snapshot({ upstreams: [], cache: { hits: 0, misses: 0, hitRate: undefined }, recentDenials: [] }),
  );
  assert.equal(tbody(html, 'upstreams'), '<tr class="empty"><td colspan="10">No upstreams configured.</td></tr>');
  assert.equal(tbody(html, 'denials'), '<tr class="empty"><td colspan="5">No denials recorded.</td></tr>');
  assert.equal(field(html, 'hitRate'), '—');
  assert.equal(field(html, 'hits'), '0');
  assert.equal(field(html, 'misses'), '0');
});

test('a denial without a target shows a dash', () => {
  const html = renderStatusPage(
    snapshot({ recentDenials: [{ time: 't', principal: 'p', method: 'tools/list', target: undefined, rule: 'r' }] }),
  );
  assert.match(html, /<td data-field="target">—<\/td>/);
});

test('every value is escaped: a <script> in a last error, quotes in a name, markup in rules', () => {
  const evil = '<script>alert("x")</script>';
  const html = renderStatusPage(
    snapshot({
      version: '<b>1</b>',
      startedAt: '"><img src=x onerror=alert(1)>',
      upstreams: [
        {
          name: `a"b'<c>&`,
          transport: 'stdio',
          era: '<i>modern</i>',
          state: '"ready"',
          restarts: 1,
          toolCount: 2,
          lastError: `stderr: ${evil}`,
        },
      ],
      recentDenials: [
        { time: '<t>', principal: '</td><td>mallory', method: 'tools/call', target: evil, rule: "deny 'x' & <y>" },
      ],
    }),
  );
  // The only <script> element is the page's own; its contents never include a value.
  assert.equal(html.match(/<script>/g)?.length, 1);
  assert.equal(html.match(/<\/script>/g)?.length, 1);
  assert.doesNotMatch(html, /<img|<b>1|<i>modern|<t>|<\/td><td>mallory/);
  assert.match(html, /<td data-field="lastError">stderr: &lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;<\/td>/);
  assert.match(html, /<tr data-upstream="a&quot;b&#39;&lt;c&gt;&amp;" data-state="&quot;ready&quot;">/);
  assert.match(html, /<td data-field="name">a&quot;b&#39;&lt;c&gt;&amp;<\/td>/);
  assert.match(html, /<td data-field="principal">&lt;\/td&gt;&lt;td&gt;mallory<\/td>/);
  assert.match(html, /<td data-field="rule">deny &#39;x&#39; &amp; &lt;y&gt;<\/td>/);
  assert.equal(field(html, 'version'), '&lt;b&gt;1&lt;/b&gt;');
  assert.equal(field(html, 'startedAt'), '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
});

test('escapeHtml covers the five characters that matter in content and quoted attributes', () => {
  assert.equal(escapeHtml(`&<>"'`), '&amp;&lt;&gt;&quot;&#39;');
  assert.equal(escapeHtml('plain text / 100%'), 'plain text / 100%');
  assert.equal(escapeHtml(42), '42');
});

/** Runs the page's inline script against a stand-in DOM, clock and fetch; nothing happens until `tick()`. */
function runPageScript(html: string, answer: () => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>) {
  const timers: { fn: () => unknown; ms: number }[] = [];
  const fetched: { url: string; init: any }[] = [];
  const elements = new Map<string, { textContent: string; innerHTML: string }>();
  const element = (key: string) => elements.get(key) ?? elements.set(key, { textContent: '', innerHTML: '' }).get(key)!;
  const body = { dataset: {} as Record<string, string> };
  const context = vm.createContext({
    setTimeout: (fn: () => unknown, ms: number) => void timers.push({ fn, ms }),
    fetch: (url: string, init: unknown) => (fetched.push({ url, init }), answer()),
    document: {
      querySelector: (selector: string) => element(selector),
      getElementById: (id: string) => element(`#${id}`),
      body,
    },
  });
  vm.runInContext(inline(html, 'script'), context);
  return {
    timers,
    fetched,
    body,
    element,
    /** Runs the earliest pending timer and waits for what it started. */
    async tick(): Promise<void> {
      const next = timers.shift();
      assert.ok(next, 'no timer pending');
      await next.fn();
    },
  };
}

test(
  'refreshes itself: status.json every 2 s re-renders the same rows the server drew; a failed fetch marks the ' +
    'page stale and keeps polling',
  async () => {
    const before = snapshot();
    const after = snapshot({
      uptimeSeconds: 90_061,
      upstreams: [
        {
          name: 'files',
          transport: 'stdio',
          era: 'modern',
          state: 'backing-off',
          restarts: 1,
          toolCount: undefined,
          lastError: '<b>exit 3</b>',
        },
      ],
      recentDenials: [],
    });
    let next: () => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }> = async () => ({
      ok: true,
      status: 200,
      json: async () => after,
    });
    const page = runPageScript(renderStatusPage(before), () => next());
    assert.deepEqual(
      page.timers.map((t) => t.ms),
      [2000],
      'one refresh scheduled, 2 s out',
    );
    assert.equal(page.fetched.length, 0, 'nothing fetched before the first interval');

    await page.tick();
    assert.deepEqual(
      page.fetched.map((f) => f.url),
      ['status.json'],
    );
    assert.equal(page.fetched[0]!.init.cache, 'no-store');
    // What the script draws for the new snapshot is what the server draws for it, cell for cell.
    const drawn = page.element('#upstreams').innerHTML;
    const served = renderStatusPage(after);
    assert.deepEqual(row(drawn, 'files'), row(served, 'files'));
    assert.match(drawn, /data-state="backing-off"/);
    assert.equal(page.element('#denials').innerHTML, tbody(served, 'denials'));
    assert.equal(page.element('[data-field="uptime"]').textContent, field(served, 'uptime'));
    assert.equal(page.body.dataset.refreshes, '1');
    assert.equal(page.body.dataset.stale, undefined);
    assert.deepEqual(
      page.timers.map((t) => t.ms),
      [2000],
      'the next refresh is scheduled',
    );

    next = async () => ({ ok: false, status: 401, json: async () => ({}) });
    await page.tick();
    assert.equal(page.body.dataset.stale, 'true');
    assert.match(page.element('#live').textContent, /not updated: status\.json answered 401/);
    assert.equal(page.element('#upstreams').innerHTML, drawn, 'the last good rows stay');
    assert.deepEqual(
      page.timers.map((t) => t.ms),
      [2000],
      'and it keeps trying',
    );

    next = async () => ({ ok: true, status: 200, json: async () => before });
    await page.tick();
    assert.equal(page.body.dataset.stale, undefined);
    assert.equal(page.body.dataset.refreshes, '2');
    assert.deepEqual(row(page.element('#upstreams').innerHTML, 'old-http'), row(renderStatusPage(before), 'old-http'));
  },
);

test('without scripts, a meta refresh every 2 s', () => {
  assert.match(renderStatusPage(snapshot()), /<noscript><meta http-equiv="refresh" content="2"><\/noscript>/);
});

test(
  'self-contained: ' + 'no external assets, a CSP that allows only the inline script and style and the own origin',
  () => {
    const html = renderStatusPage(snapshot());
    assert.doesNotMatch(html, /https?:\/\//);
    assert.doesNotMatch(html, /\ssrc=/);
    assert.doesNotMatch(html, /\shref=/);
    assert.doesNotMatch(html, /\sstyle="/, 'no inline style attributes (the CSP would block them)');
    const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    assert.match(STATUS_PAGE_CSP, /^default-src 'none'; /);
    assert.ok(
      STATUS_PAGE_CSP.includes(`script-src ${sha(inline(html, 'script'))}`),
      'script hash matches the inline script',
    );
    assert.ok(
      STATUS_PAGE_CSP.includes(`style-src ${sha(inline(html, 'style'))}`),
      'style hash matches the inline style',
    );
    assert.ok(STATUS_PAGE_CSP.includes("connect-src 'self'"));
    assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${escapeHtml(STATUS_PAGE_CSP)}">`));
  },
);
