// Issue 36: the status page's sparklines have axes — the value at the top of each plot (the latency chart's
// highest p95, the error chart's 100%) and the time span from the left edge to "now" — both as the server
// first renders them and as the page's script redraws them, inside the chart and not over one another.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { chromium } from '../services.js';
import { launchChromium } from './connect-browser.js';
import { eventually, fixture, post, request, startTestGateway, until } from './harness.js';

const browserNeed = await chromium('the status page axes in headless Chromium');

interface Axis {
  texts: Record<string, string>;
  label: string;
  /** Every axis label lies inside the chart's box, and no two overlap. */
  inside: boolean;
  apart: boolean;
}

function readAxes(page: Page, server: string, chart: 'latency' | 'errors'): Promise<Axis | null> {
  return page.evaluate(
    ([name, which]) => {
      const svg = document.querySelector(`#traffic tr[data-traffic="${CSS.escape(name!)}"] svg[data-chart="${which}"]`);
      if (!svg) return null;
      const box = svg.getBoundingClientRect();
      const texts = [...svg.querySelectorAll('text[data-axis]')];
      const boxes = texts.map((t) => t.getBoundingClientRect());
      const inside = boxes.every(
        (b) =>
          b.width > 0 &&
          b.left >= box.left - 0.5 &&
          b.right <= box.right + 0.5 &&
          b.top >= box.top - 0.5 &&
          b.bottom <= box.bottom + 0.5,
      );
      const apart = boxes.every((a, i) =>
        boxes.every(
          (b, j) => i === j || a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top,
        ),
      );
      return {
        texts: Object.fromEntries(texts.map((t) => [t.getAttribute('data-axis')!, t.textContent ?? ''])),
        label: svg.getAttribute('aria-label') ?? '',
        inside,
        apart,
      };
    },
    [server, chart],
  );
}

describe('the status page sparklines have axes', { skip: browserNeed.skip }, () => {
  let gateway: RunningGateway | undefined;
  let browser: Browser | undefined;

  before(async () => {
    browserNeed.check();
    gateway = await startTestGateway({ alpha: fixture('modern-server') });
    await eventually(async () => (await fetch(`${gateway!.url}/readyz`)).status === 200, 30_000);
    browser = await launchChromium(browserNeed.path!);
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
  });

  test('time span and top value on both charts, first rendered and redrawn', { timeout: 90_000 }, async () => {
    const gw = gateway!;
    const alpha = `${gw.url}/servers/alpha/mcp`;
    for (let i = 0; i < 4; i++)
      assert.equal(
        (await post(alpha, request('tools/call', { name: 'echo', arguments: { text: `n${i}` } }))).body?.result
          ?.content?.[0]?.text,
        `n${i}`,
      );
    const status = await (await fetch(`${gw.url}/status.json`)).json();
    const traffic = status.traffic as { slotSeconds: number; upstreams: { name: string; points: unknown[] }[] };
    const seconds = traffic.slotSeconds * traffic.upstreams.find((u) => u.name === 'alpha')!.points.length;
    const span = `\u2212${
      seconds < 120
        ? `${seconds} s`
        : seconds < 7200
          ? `${Math.round(seconds / 60)} min`
          : `${Math.round(seconds / 3600)} h`
    }`;

    const page = await (await browser!.newContext()).newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${gw.url}/`, { waitUntil: 'load' });
    const check = async (when: string) => {
      const latency = (await readAxes(page, 'alpha', 'latency'))!;
      assert.ok(latency, `${when}: a latency chart`);
      assert.deepEqual(Object.keys(latency.texts).sort(), ['from', 'max', 'to'], when);
      assert.match(latency.texts.max!, /^\d+(\.\d)? ms$/, `${when}: the top of the latency plot is its highest p95`);
      assert.equal(latency.label, `p95 latency per slot, highest ${latency.texts.max}`, when);
      assert.equal(latency.texts.from, span, `${when}: the left edge is the window's start`);
      assert.equal(latency.texts.to, 'now', when);
      const errors = (await readAxes(page, 'alpha', 'errors'))!;
      assert.deepEqual(errors.texts, { max: '100%', from: span, to: 'now' }, when);
      for (const axis of [latency, errors])
        assert.ok(axis.inside && axis.apart, `${when}: labels inside the chart, apart: ${JSON.stringify(axis)}`);
    };
    await check('first view');
    // The script redraws the table on its refresh: the same axes come back.
    await page.evaluate(() => (document.getElementById('traffic')!.innerHTML = ''));
    const redrawn = await until(async () => (await readAxes(page, 'alpha', 'latency')) !== null, 15_000, 100);
    assert.ok(redrawn, 'the script redrew the traffic table');
    await check('redrawn');
    if (process.env.STATUS_SCREENSHOT) await page.screenshot({ path: process.env.STATUS_SCREENSHOT, fullPage: true });
    assert.deepEqual(problems, []);
  });
});
