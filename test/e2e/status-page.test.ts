// The status page in a real browser: Debian's headless Chromium driven by playwright-core against a
// gateway on loopback with two modern children. The page loads, shows both upstreams ready with their tool
// counts, and — refreshing itself, never reloaded by the test — shows a restart after one child crashes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { renderStatusPage, type StatusSnapshot } from '../../src/ops/status-page.js';
import { chromium } from '../services.js';
import { launchChromium } from './connect-browser.js';
import { fixture, post, request, startTestGateway, until } from './harness.js';

const browserNeed = await chromium('the status page in headless Chromium');
// This machine's network is closed: no QUIC, no background fetches, no component updates.
const SERVERS = ['alpha', 'beta'] as const;
const DASH = '\u2014';

type Row = Record<string, string | null>;

/** The text of each `data-field` cell in one upstream's row, or null when the page has no such row. */
function readRow(page: Page, name: string): Promise<Row | null> {
  return page.evaluate((server) => {
    const row = document.querySelector(`#upstreams tr[data-upstream="${CSS.escape(server)}"]`);
    if (!row) return null;
    return Object.fromEntries(
      [...row.querySelectorAll('td[data-field]')].map((td) => [td.getAttribute('data-field')!, td.textContent]),
    );
  }, name);
}

function readAllRows(page: Page): Promise<Record<string, Row>> {
  return page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('#upstreams tr[data-upstream]')].map((tr) => [
        tr.getAttribute('data-upstream')!,
        Object.fromEntries(
          [...tr.querySelectorAll('td[data-field]')].map((td) => [td.getAttribute('data-field')!, td.textContent]),
        ),
      ]),
    ),
  );
}

const readCache = (page: Page) =>
  page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('#cache dd[data-field]')].map((dd) => [
        dd.getAttribute('data-field')!,
        dd.textContent,
      ]),
    ),
  );

describe('the status page in headless Chromium', { skip: browserNeed.skip }, () => {
  let gateway: RunningGateway | undefined;
  let browser: Browser | undefined;

  before(async () => {
    browserNeed.check();
    gateway = await startTestGateway({ alpha: fixture('modern-server'), beta: fixture('modern-server') });
    browser = await launchChromium(browserNeed.path!);
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
  });

  test('loads, shows both upstreams ready with their tool counts, and shows a restart without being reloaded', {
    timeout: 90_000,
  }, async () => {
    const gw = gateway!;
    assert.match(gw.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'loopback only');

    // How many tools each upstream lists, straight from the gateway.
    const toolCounts: Record<string, number> = {};
    for (const name of SERVERS) {
      const list = await post(`${gw.url}/servers/${name}/mcp`, request('tools/list'));
      assert.ok(Array.isArray(list.body?.result?.tools), `tools/list on ${name}: ${JSON.stringify(list.body)}`);
      toolCounts[name] = list.body.result.tools.length;
    }

    const context = await browser!.newContext();
    const page = await context.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // A failed load is checked by its response below, where the URL is known.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(`console: ${message.text()}`);
    });
    page.on('response', (r) => {
      // The browser asks for /favicon.ico on its own; the gateway has none (the page links no assets).
      if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico')
        problems.push(`${r.status()} for ${r.url()}`);
    });

    try {
      // ---- the page loads, served by the gateway ------------------------------------------------
      const response = await page.goto(`${gw.url}/`, { waitUntil: 'load' });
      assert.ok(response, 'no response for GET /');
      const type = response.headers()['content-type'] ?? '';
      assert.equal(response.status(), 200, `GET / answered ${response.status()}`);
      assert.match(
        type,
        /^text\/html/,
        `GET / answered ${type}, not the status page: is renderStatusPage wired as the page for GET /?`,
      );
      assert.equal(await page.title(), 'mcp-gateway status');
      let navigations = 0;
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) navigations++;
      });

      // ---- both upstreams, ready, with their tool counts (server-rendered, then kept current) ------
      const initial = await readAllRows(page);
      assert.deepEqual(Object.keys(initial).sort(), [...SERVERS]);
      for (const name of SERVERS) {
        const row = initial[name]!;
        assert.equal(row.name, name);
        assert.equal(row.transport, 'stdio');
        assert.equal(row.era, 'modern');
        assert.equal(row.state, 'ready');
        assert.equal(row.restarts, '0');
      }
      for (const name of SERVERS) {
        const shown = await until(
          async () => (await readRow(page, name))?.toolCount === String(toolCounts[name]),
          6_000,
          100,
        );
        assert.ok(
          shown,
          `${name}: the page shows ${(await readRow(page, name))?.toolCount} tools, tools/list has ${toolCounts[name]}`,
        );
      }

      // ---- the page's own script refreshes it from status.json, rendering what the server renders ----
      assert.ok(
        await until(() => page.evaluate(() => Number(document.body.dataset.refreshes) >= 1), 6_000, 100),
        'the page never refreshed itself from status.json',
      );
      assert.equal(
        await page.evaluate(() => document.body.dataset.stale),
        undefined,
        `refresh failed: ${await page.textContent('#live')}`,
      );
      // status.json counts its own list reads as cache misses, so two fetches a moment apart differ: from here
      // the page's refreshes are answered with one snapshot the server produced, and the comparison is exact.
      const snapshot = (await (await fetch(`${gw.url}/status.json`)).json()) as StatusSnapshot;
      await page.route('**/status.json', (route) =>
        route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(snapshot) }),
      );
      const refreshes = await page.evaluate(() => Number(document.body.dataset.refreshes));
      // One more than the next: a refresh already in flight when the route was set may bring a newer snapshot.
      assert.ok(
        await until(
          () => page.evaluate((n) => Number(document.body.dataset.refreshes) > n + 1, refreshes),
          10_000,
          100,
        ),
        'the page stopped refreshing itself',
      );
      const reference = await context.newPage();
      // its script cannot reach status.json from about:blank: it only reads as rendered
      await reference.setContent(renderStatusPage(snapshot));
      assert.deepEqual(
        await readAllRows(page),
        await readAllRows(reference),
        'the script renders the upstreams as the server does',
      );
      assert.deepEqual(
        await readCache(page),
        await readCache(reference),
        'the script renders the cache as the server does',
      );
      await reference.close();
      await page.unroute('**/status.json');

      // ---- crash one child; watch the page, never reloading it ------------------------------------
      await page.evaluate(() => {
        (window as unknown as { sameDocument: boolean }).sameDocument = true;
        const seen: { state: string | null; restarts: string | null; lastError: string | null }[] = [];
        (window as unknown as { alphaSeen: typeof seen }).alphaSeen = seen;
        new MutationObserver(() => {
          // (no named inner functions: tsx would wrap them in a __name helper the page does not have)
          const row = document.querySelector('#upstreams tr[data-upstream="alpha"]');
          const cells: Record<string, string | null> = Object.fromEntries(
            [...(row?.querySelectorAll('td[data-field]') ?? [])].map((td) => [
              td.getAttribute('data-field')!,
              td.textContent,
            ]),
          );
          seen.push({
            state: cells.state ?? null,
            restarts: cells.restarts ?? null,
            lastError: cells.lastError ?? null,
          });
        }).observe(document.getElementById('upstreams')!, { childList: true, subtree: true, characterData: true });
      });
      const crash = await post(`${gw.url}/servers/alpha/mcp`, request('tools/call', { name: 'crash', arguments: {} }));
      assert.match(crash.body?.error?.message ?? '', /Upstream 'alpha' exited with code 3/);

      const restarted = await until(async () => (await readRow(page, 'alpha'))?.restarts === '1', 15_000, 100);
      assert.ok(
        restarted,
        `alpha's restarts on the page: ${JSON.stringify(await readRow(page, 'alpha'))}; gateway: ` +
          `${JSON.stringify(gw.upstreams.get('alpha')!.status())}`,
      );
      // Back to ready, with the last error the gateway holds now (the supervisor clears it on a restart).
      const settled = await until(
        async () => {
          const row = await readRow(page, 'alpha');
          const truth = gw.upstreams.get('alpha')!.status();
          return row?.state === 'ready' && truth.state === 'ready' && row.lastError === (truth.lastError || DASH);
        },
        15_000,
        100,
      );
      assert.ok(
        settled,
        `alpha on the page: ${JSON.stringify(await readRow(page, 'alpha'))}; gateway: ` +
          `${JSON.stringify(gw.upstreams.get('alpha')!.status())}`,
      );
      const beta = await readRow(page, 'beta');
      assert.equal(beta?.state, 'ready');
      assert.equal(beta?.restarts, '0', 'the other upstream did not restart');

      // A refresh that happened while the child was down shows the state and the exit (visible only if a
      // refresh fell inside the short backoff).
      const seen = await page.evaluate(
        () =>
          (
            window as unknown as {
              alphaSeen: { state: string | null; restarts: string | null; lastError: string | null }[];
            }
          ).alphaSeen,
      );
      for (const view of seen.filter((v) => v.state !== 'ready')) {
        assert.match(view.state ?? '', /^(backing-off|starting|unhealthy)$/);
        if (view.state === 'backing-off') assert.match(view.lastError ?? '', /exited with code 3/);
      }

      // The same document all along, and nothing fetched from anywhere but the gateway.
      assert.equal(
        await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
        true,
        'the page was reloaded',
      );
      assert.equal(navigations, 0, 'the page navigated');
      const elsewhere = requested.filter((url) => !url.startsWith(`${gw.url}/`));
      assert.deepEqual(elsewhere, [], 'requests beyond the gateway');
      assert.ok(
        requested.some((url) => url === `${gw.url}/status.json`),
        'the page fetched status.json',
      );
      assert.deepEqual(problems, [], 'errors in the page (CSP violations included)');
    } finally {
      await context.close();
    }
  });
});
