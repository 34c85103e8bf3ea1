// The limiter seen from a client, on a gateway in this process: a waiting client that goes away frees its
// place and its call never reaches the server; refusals are 503 with Retry-After on /servers/<name>/mcp
// and on /mcp alike, also for a call that asked for progress (its stream has not started while it waits);
// a cached list is answered while every slot is taken; a 2025 client's refusals are 503s as well.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { post, request, ROOT, startTestGateway, until, send } from './harness.js';

const slow = (callMs: number) => ({
  command: process.execPath,
  args: ['test/fixtures/slow-server.mjs'],
  cwd: ROOT,
  era: 'modern',
  env: { CALL_MS: String(callMs) },
  maxInFlight: 1,
  maxQueued: 1,
  queueTimeoutMs: 60_000,
});

const wait = (text: string, meta: Record<string, unknown> = {}) =>
  request('tools/call', { name: 'wait', arguments: { text }, _meta: meta });

describe('overload, one request at a time', () => {
  let gateway: RunningGateway;
  let url: string;

  before(async () => {
    gateway = await startTestGateway({ slow: slow(2000) });
    url = `${gateway.url}/servers/slow/mcp`;
    assert.equal((await post(url, request('tools/list'))).status, 200);
  });
  after(() => gateway.close());

  /** What the server says reached it (itself a call: only asked once nothing else is in flight). */
  const received = async (): Promise<string[]> =>
    JSON.parse(
      (await post(url, request('tools/call', { name: 'received', arguments: {} }))).body.result.content[0].text,
    );
  /** Requests in flight and queued, as /metrics tells them. */
  const load = async (): Promise<[number, number]> => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const value = (name: string) =>
      Number(new RegExp(`^mcp_gateway_upstream_${name}\\{server="slow"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    return [value('in_flight'), value('queued')];
  };
  const loadIs = (inFlight: number, queued: number) =>
    until(async () => (await load()).join() === `${inFlight},${queued}`, 5_000);

  test('a waiting client that goes away frees its place at once, and its call never reaches the server', async () => {
    const first = post(url, wait('first'));
    assert.ok(await loadIs(1, 0));
    const leaving = new AbortController();
    const gone = post(url, wait('gone'), undefined, { signal: leaving.signal }).catch(() => 'aborted');
    assert.ok(await loadIs(1, 1));
    // The one place is taken, so another is refused…
    assert.equal((await post(url, wait('probe'))).status, 503);
    leaving.abort();
    assert.equal(await gone, 'aborted');
    // …and once the waiting client went away, its place is free (while `first` still runs).
    assert.ok(await loadIs(1, 0), 'the place was freed');
    const next = post(url, wait('next'));
    assert.ok(await loadIs(1, 1), 'the next one waits instead of being refused');
    assert.equal((await first).status, 200);
    const answer = await next;
    assert.equal(answer.status, 200);
    assert.equal(answer.body.result.content[0].text, 'waited: 4');
    assert.deepEqual(
      await received(),
      ['first', 'next'],
      'neither the abandoned call nor the refused one reached the server',
    );
  });

  test(
    "refusals: 503 with Retry-After on the server's endpoint, on /mcp and for a progress request; cached lists " +
      'still answer',
    async () => {
      const first = post(url, wait('a'));
      const queued = post(url, wait('b'));
      assert.ok(await loadIs(1, 1));
      const direct = await post(url, wait('c'));
      assert.equal(direct.status, 503);
      assert.equal(direct.headers.get('retry-after'), '60');
      assert.equal(direct.body.error.code, -32603);
      assert.match(
        direct.body.error.message,
        /^slow is at capacity: 1 requests in flight and 1 waiting .*raise servers\.slow\.maxQueued$/,
      );
      assert.deepEqual(direct.body.error.data, {
        server: 'slow',
        reason: 'queue_full',
        setting: 'servers.slow.maxQueued',
        retryAfterSeconds: 60,
      });

      // A page in a browser may read Retry-After only if the answer exposes it.
      const fromPage = await send(url, wait('c2'), { origin: 'http://localhost:5173' });
      assert.equal(fromPage.status, 503);
      assert.equal(fromPage.headers.get('access-control-allow-origin'), 'http://localhost:5173');
      assert.ok(
        fromPage.headers
          .get('access-control-expose-headers')
          ?.split(/\s*,\s*/)
          .includes('retry-after'),
        'Retry-After is exposed to the page',
      );

      const aggregated = await post(
        `${gateway.url}/mcp`,
        request('tools/call', { name: 'slow__wait', arguments: { text: 'd' } }),
      );
      assert.equal(aggregated.status, 503);
      assert.equal(aggregated.body.error.data.reason, 'queue_full');

      // A /mcp list that no upstream could answer because each is at capacity is itself a capacity refusal
      // (prompts/list has not been read before, so it is not cached and reaches the limiter).
      const merged = await post(`${gateway.url}/mcp`, request('prompts/list'));
      assert.equal(merged.status, 503, JSON.stringify(merged.body));
      assert.equal(merged.headers.get('retry-after'), '60');
      assert.match(
        merged.body.error.message,
        /^No upstream answered prompts\/list, every one is at capacity: slow: slow is at capacity/,
      );
      assert.equal(merged.body.error.data.reason, 'every_upstream_at_capacity');

      const streamed = await post(url, wait('e', { progressToken: 'p' }));
      assert.equal(streamed.status, 503, 'no stream was opened for a request that never reached the server');
      assert.equal(streamed.headers.get('retry-after'), '60');
      assert.equal(streamed.body.error.data.reason, 'queue_full');

      const listed = await post(url, request('tools/list'));
      assert.equal(listed.status, 200);
      assert.equal(listed.body.result.tools.length, 3);
      assert.deepEqual([(await first).status, (await queued).status], [200, 200]);
    },
  );

  test("a 2025 client's refused request is a 503 with Retry-After too, plain or one that would stream", async () => {
    const legacyHeaders: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const init = await fetch(url, {
      method: 'POST',
      headers: legacyHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'i',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    });
    assert.equal(init.status, 200);
    const session = {
      ...legacyHeaders,
      'mcp-session-id': init.headers.get('mcp-session-id')!,
      'mcp-protocol-version': '2025-06-18',
    };
    await init.text();
    const first = post(url, wait('a'));
    const queued = post(url, wait('b'));
    assert.ok(await loadIs(1, 1));
    // A 2025 client's tools/call is answered on a stream (the server may ask it something); a
    // completion/complete is plain JSON and not cached, so it reaches the limiter too.
    for (const [what, body] of [
      [
        'a tools/call (SSE unless refused)',
        { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'wait', arguments: { text: 'c' } } },
      ],
      [
        'a plain JSON request',
        {
          jsonrpc: '2.0',
          id: 'p',
          method: 'completion/complete',
          params: { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: '' } },
        },
      ],
    ] as const) {
      const refused = await fetch(url, { method: 'POST', headers: session, body: JSON.stringify(body) });
      const text = await refused.text();
      assert.equal(refused.status, 503, `${what}: ${text.slice(0, 300)}`);
      assert.equal(refused.headers.get('retry-after'), '60', what);
      assert.match(refused.headers.get('content-type') ?? '', /^application\/json/, what);
      assert.equal(JSON.parse(text).error.data.reason, 'queue_full', what);
    }
    assert.deepEqual([(await first).status, (await queued).status], [200, 200]);
  });
});
