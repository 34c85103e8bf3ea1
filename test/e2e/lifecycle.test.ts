// The supervisor's less travelled paths: a pinned era, a child's ping, a crash during initialize, close()
// during backoff, recovery after unhealthy, the shutdown ladder, and a crash behind a wrapper process.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { StdioProcess } from '../../bridge/stdio-process.js';
import { StdioUpstream, type StdioUpstreamConfig } from '../../bridge/stdio-upstream.js';
import { silentLog } from '../../src/protocol/log.js';
import { fixture, post, request, ROOT, schemaProblems, startTestGateway, until } from './harness.js';
import { tempDir } from '../temp.js';

const textOf = (answer: { body: any }) => answer.body.result?.content?.[0]?.text;

function upstream(overrides: Partial<StdioUpstreamConfig>): StdioUpstream {
  return new StdioUpstream(
    {
      name: 't',
      command: process.execPath,
      args: [],
      env: {},
      cwd: ROOT,
      maxLineBytes: 1 << 20,
      era: 'auto',
      timeoutMs: 5_000,
      probeTimeoutMs: 2_000,
      startupTimeoutMs: 5_000,
      legacyTtlMs: 0,
      shutdownGraceMs: 300,
      backoff: { initialMs: 20, maxMs: 400, crashLimit: 3, windowMs: 10_000 },
      clientInfo: { name: 'test', version: '0' },
      ...overrides,
    },
    silentLog,
  );
}


test('era: modern and era: legacy skip the probe and serve', async () => {
  const gateway = await startTestGateway({
    modern: fixture('modern-server', { era: 'modern' }),
    legacy: fixture('legacy-server', { era: 'legacy' }),
  });
  try {
    for (const [server, era] of [['modern', 'modern'], ['legacy', 'legacy']] as const) {
      const answer = await post(`${gateway.url}/servers/${server}/mcp`, request('tools/call', { name: 'echo', arguments: { text: server } }));
      assert.equal(textOf(answer), server);
      assert.equal(gateway.upstreams.get(server)!.status().era, era);
    }
  } finally {
    await gateway.close();
  }
});

test("a legacy child's ping in the middle of a call is answered by the gateway", async () => {
  const gateway = await startTestGateway({ legacy: fixture('legacy-server') });
  try {
    const answer = await post(`${gateway.url}/servers/legacy/mcp`, request('tools/call', { name: 'pingclient', arguments: {} }));
    assert.equal(textOf(answer), 'pong ok');
  } finally {
    await gateway.close();
  }
});

// Answers the probe like a legacy server (method not found), then dies on initialize.
const DIES_ON_INITIALIZE = `
  require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
    const m = JSON.parse(line);
    if (m.method === 'initialize') { console.error('cannot initialize: missing API key'); process.exit(4); }
    if (m.id !== undefined) console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } }));
  });`;

test('a child that exits during initialize: callers learn its exit code and stderr, and it is restarted', async () => {
  const u = upstream({ args: ['-e', DIES_ON_INITIALIZE] });
  try {
    void u.start();
    assert.ok(await until(() => u.status().state === 'unhealthy', 5_000), `state ${u.status().state}`);
    const answer = await u.request(request('tools/list'));
    assert.ok('error' in answer);
    assert.match(answer.error.message, /exited with code 4: cannot initialize: missing API key/);
    assert.deepEqual(schemaProblems('tools/list', answer), []);
    assert.ok(u.status().restarts >= 3);
  } finally {
    await u.close();
  }
});

test('close() during backoff stops for good: no restart afterwards', async () => {
  const u = upstream({ args: ['-e', 'process.exit(1)'], backoff: { initialMs: 300, maxMs: 300, crashLimit: 10, windowMs: 10_000 } });
  void u.start();
  assert.ok(await until(() => u.status().state === 'backing-off', 3_000));
  const started = Date.now();
  await u.close();
  assert.ok(Date.now() - started < 200, 'close() does not wait for the backoff');
  const restarts = u.status().restarts;
  await sleep(500);
  assert.equal(u.status().state, 'stopped');
  assert.equal(u.status().restarts, restarts);
  const answer = await u.request(request('tools/list'));
  assert.ok('error' in answer && /stopped/.test(answer.error.message));
});

test('an unhealthy child is tried again after the window and recovers', async () => {
  const marker = path.join(tempDir('mcp-gw-'), 'ready');
  // Exits until the marker exists, then runs the modern fixture.
  const script = `if (!require('fs').existsSync(${JSON.stringify(marker)})) process.exit(2); import(${JSON.stringify(path.join(ROOT, 'test/fixtures/modern-server.ts'))});`;
  const u = upstream({ args: ['--import', 'tsx', '-e', script] });
  try {
    void u.start();
    assert.ok(await until(() => u.status().state === 'unhealthy', 8_000), `state ${u.status().state}`);
    writeFileSync(marker, '');
    assert.ok(await until(() => u.status().state === 'ready', 8_000), `state ${u.status().state}`);
    const answer = await u.request(request('tools/call', { name: 'echo', arguments: { text: 'recovered' } }));
    assert.equal((answer as any).result.content[0].text, 'recovered');
  } finally {
    await u.close();
  }
});

test('the shutdown ladder: a polite child leaves on stdin close; a stubborn one is SIGKILLed', async () => {
  const events = { message() {}, oversized() {}, exit() {} };
  const spec = { command: process.execPath, env: {}, cwd: ROOT, maxLineBytes: 1024 };
  const polite = new StdioProcess({ ...spec, args: ['-e', "process.stdin.resume(); process.stdin.on('end', () => process.exit(0))"] }, silentLog, events);
  assert.deepEqual(await polite.stop(1_000), { code: 0, signal: null, spawnError: undefined });
  const stubborn = new StdioProcess(
    { ...spec, args: ['-e', "process.on('SIGTERM', () => {}); process.stdin.resume(); setInterval(() => {}, 1000)"] },
    silentLog,
    events,
  );
  await sleep(300); // let it install its SIGTERM handler
  const started = Date.now();
  const info = await stubborn.stop(200);
  assert.equal(info?.signal, 'SIGKILL');
  assert.ok(Date.now() - started < 1_500);
});

test('a crash while a grandchild holds stdout open is still seen at once', async () => {
  const gateway = await startTestGateway({
    family: { command: 'sh', args: ['-c', `sleep 60 & exec ${process.execPath} --import tsx test/fixtures/modern-server.ts`], cwd: ROOT },
  });
  try {
    const url = `${gateway.url}/servers/family/mcp`;
    const pid = Number(textOf(await post(url, request('tools/call', { name: 'pid', arguments: {} }))));
    const inFlight = post(url, request('tools/call', { name: 'slow', arguments: { ms: 3_000 } }));
    await sleep(100);
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    const answer = await inFlight;
    assert.ok(Date.now() - killedAt < 1_000, `error after ${Date.now() - killedAt} ms`);
    assert.match(answer.body.error.message, /killed by SIGKILL/);
    const next = await post(url, request('tools/call', { name: 'echo', arguments: { text: 'again' } }));
    assert.equal(textOf(next), 'again');
  } finally {
    await gateway.close();
  }
});

