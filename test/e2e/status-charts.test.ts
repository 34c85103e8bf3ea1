// The status page's traffic charts in a real browser (headless Chromium through playwright-core): calls the
// test makes through the gateway appear — without reloading the page — as points on that server's latency
// chart, and the errors it causes as its error rate and red bars; the other server stays quiet. The charts
// the page's script draws are the ones the server renders for the same snapshot.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { renderStatusPage, type StatusSnapshot } from '../../src/ops/status-page.js';
import { chromium } from '../services.js';
import { launchChromium } from './connect-browser.js';
import { eventually, fixture, post, request, startTestGateway, until } from './harness.js';

const browserNeed = await chromium('the status page charts in headless Chromium');

interface ChartRow {
  cells: Record<string, string | null>;
  latency: { points: number; path: string; dots: number; width: number; height: number } | null;
  errors: { points: number; errors: number; red: number; grey: number } | null;
}

/** One server's row of the traffic table: its cells' text and what its two charts draw. */
function readTraffic(page: Page, server: string): Promise<ChartRow | null> {
  return page.evaluate((name) => {
    const row = document.querySelector(`#traffic tr[data-traffic="${CSS.escape(name)}"]`);
    if (!row) return null;
    const cells = Object.fromEntries(
      [...row.querySelectorAll('td[data-field]')].map((td) => [td.getAttribute('data-field')!, td.textContent]),
    );
    const line = row.querySelector('svg[data-chart="latency"]');
    const bars = row.querySelector('svg[data-chart="errors"]');
    const box = line?.getBoundingClientRect();
    return {
      cells,
      latency:
        line && box
          ? {
              points: Number(line.getAttribute('data-points')),
              path: line.querySelector('path')?.getAttribute('d') ?? '',
              dots: line.querySelectorAll('circle').length,
              width: box.width,
              height: box.height,
            }
          : null,
      errors: bars
        ? {
            points: Number(bars.getAttribute('data-points')),
            errors: Number(bars.getAttribute('data-errors')),
            red: bars.querySelectorAll('rect.bad').length,
            grey: bars.querySelectorAll('rect.ok').length,
          }
        : null,
    };
  }, server);
}

describe('the status page traffic charts in headless Chromium', { skip: browserNeed.skip }, () => {
  let gateway: RunningGateway | undefined;
  let browser: Browser | undefined;

  before(async () => {
    browserNeed.check();
    gateway = await startTestGateway({ alpha: fixture('modern-server'), beta: fixture('modern-server') });
    await eventually(async () => (await fetch(`${gateway!.url}/readyz`)).status === 200, 30_000);
    browser = await launchChromium(browserNeed.path!);
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
  });

  test("calls and errors the test makes show on that server's charts, refreshed in place", {
    timeout: 90_000,
  }, async () => {
    const gw = gateway!;
    const context = await browser!.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(`console: ${message.text()}`);
    });
    try {
      await page.goto(`${gw.url}/`, { waitUntil: 'load' });
      // Before the test's calls: a row per server, no errors. (The snapshot itself counts each server's tools
      // with a tools/list, so a few calls are there already.)
      const quiet = await readTraffic(page, 'alpha');
      assert.ok(quiet, 'the page has a traffic row for alpha');
      assert.equal(quiet.errors?.errors, 0);
      assert.equal(
        quiet.cells.errorRate === '0.0%' || quiet.cells.errorRate === '\u2014',
        true,
        `error rate before: ${quiet.cells.errorRate}`,
      );
      const before = Number(quiet.cells.calls);
      await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));

      // Eight calls to alpha: six answered, two refused by the server (a tool it does not have).
      const alpha = `${gw.url}/servers/alpha/mcp`;
      for (let i = 0; i < 6; i++)
        assert.equal(
          (await post(alpha, request('tools/call', { name: 'echo', arguments: { text: `n${i}` } }))).body?.result
            ?.content?.[0]?.text,
          `n${i}`,
        );
      for (let i = 0; i < 2; i++)
        assert.ok((await post(alpha, request('tools/call', { name: 'missing', arguments: {} }))).body?.error);

      // Both counts from one refresh: the snapshot's own tools/list can make the count reach before + 8 on a
      // refresh taken between the test's last two calls, which then shows only one of the two errors.
      const shown = await until(
        async () => {
          const now = await readTraffic(page, 'alpha');
          return Number(now?.cells.calls) >= before + 8 && now?.errors?.errors === 2;
        },
        10_000,
        100,
      );
      assert.ok(shown, `alpha's row after 8 calls: ${JSON.stringify(await readTraffic(page, 'alpha'))}`);
      const row = (await readTraffic(page, 'alpha'))!;
      const calls = Number(row.cells.calls);
      assert.equal(row.cells.errorRate, `${((2 / calls) * 100).toFixed(1)}%`, `2 errors in ${calls} calls`);
      assert.match(row.cells.p95Ms ?? '', /^\d+(\.\d)? ms$/);
      assert.ok(
        row.latency && row.latency.points >= 1 && row.latency.dots === row.latency.points,
        `latency chart: ${JSON.stringify(row.latency)}`,
      );
      assert.match(row.latency.path, /^M[\d.]+ [\d.]+/, 'the latency line starts at a point');
      assert.ok(row.latency.width > 50 && row.latency.height > 10, 'the chart is drawn with a size');
      assert.ok(
        row.errors && row.errors.errors === 2 && row.errors.red >= 1,
        `error chart: ${JSON.stringify(row.errors)}`,
      );

      const beta = (await readTraffic(page, 'beta'))!;
      assert.ok(Number(beta.cells.calls) < 8, `beta had only the snapshot's own calls: ${beta.cells.calls}`);
      assert.equal(beta.errors?.errors, 0, 'beta had no errors');
      assert.equal(beta.errors?.red, 0);

      // The script draws what the server draws for the same snapshot.
      const snapshot = (await (await fetch(`${gw.url}/status.json`)).json()) as StatusSnapshot;
      await page.route('**/status.json', (route) =>
        route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(snapshot) }),
      );
      const refreshes = await page.evaluate(() => Number(document.body.dataset.refreshes));
      assert.ok(
        await until(
          () => page.evaluate((n) => Number(document.body.dataset.refreshes) > n + 1, refreshes),
          10_000,
          100,
        ),
        'the page stopped refreshing itself',
      );
      const reference = await context.newPage();
      await reference.setContent(renderStatusPage(snapshot));
      const html = (p: Page) => p.evaluate(() => document.getElementById('traffic')!.innerHTML.trim());
      assert.equal(await html(page), await html(reference), 'the script renders the traffic table as the server does');
      await reference.close();
      await page.unroute('**/status.json');

      assert.equal(
        await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument),
        true,
        'the page was reloaded',
      );
      assert.deepEqual(problems, [], 'errors in the page (CSP violations included)');
    } finally {
      await context.close();
    }
  });
});
