// Reloading servers while clients call: added servers start, changed ones restart, removed ones stop, and
// an untouched server keeps answering without a single failure.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually, fixture, headersFor, openListen, post, request, ROOT, startTestGateway } from './harness.js';

const servers = {
  a: fixture('modern-server'),
  b: fixture('modern-server'),
  d: fixture('legacy-server'),
};

let gateway: RunningGateway;
before(async () => {
  gateway = await startTestGateway(servers, {}, {});
  await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 20_000);
});
after(() => gateway?.close());

async function pid(path: string): Promise<string> {
  const call = request('tools/call', { name: path.startsWith('/mcp') ? path.split(' ')[1]! : 'pid', arguments: {} });
  const url = `${gateway.url}${path.split(' ')[0]}`;
  const answer = await post(url, call, headersFor(call));
  return answer.body.result?.content?.[0]?.text ?? JSON.stringify(answer.body);
}

test('a reload adds, changes and removes servers while calls to an untouched one all succeed', async () => {
  const pidA = await pid('/servers/a/mcp');
  const pidB = await pid('/servers/b/mcp');

  let stop = false;
  let calls = 0;
  const failures: string[] = [];
  const load = (async () => {
    // Two clients: the server's own endpoint, and /mcp (whose routes a reload rebuilds).
    await Promise.all(
      ['/servers/a/mcp', '/mcp'].map(async (path) => {
        for (let i = 0; !stop; i++) {
          const name = path === '/mcp' ? 'a__echo' : 'echo';
          const call = request('tools/call', { name, arguments: { text: `${path}-${i}` } });
          const answer = await post(`${gateway.url}${path}`, call, headersFor(call)).catch(
            (error: Error) => ({ status: 0, body: { error: error.message } }) as never,
          );
          calls++;
          if (answer.status !== 200 || answer.body.result?.content?.[0]?.text !== `${path}-${i}`)
            failures.push(JSON.stringify(answer.body));
        }
      }),
    );
  })();

  // Counted in calls, not in time: a loaded machine may answer few in a given 300 ms.
  await eventually(() => calls >= 10, 20_000);
  const atReload = calls;
  const next = parseConfig(
    {
      listen: { port: 0 },
      servers: { a: servers.a, b: { ...servers.b, timeoutMs: 30_000 }, c: fixture('modern-server') },
    },
    'test',
    ROOT,
  );
  const needRestart = await gateway.reload(next);
  assert.deepEqual(needRestart, [], 'only servers changed');
  await eventually(async () => (await pid('/servers/c/mcp')).match(/^\d+$/) !== null, 20_000);
  const reloaded = calls;
  await eventually(() => calls >= reloaded + 10, 20_000);
  stop = true;
  await load;

  assert.deepEqual(failures, [], `${failures.length} of ${calls} calls failed`);
  assert.ok(reloaded > atReload, `calls went on while the reload ran (${reloaded - atReload} of ${calls})`);
  assert.equal(await pid('/servers/a/mcp'), pidA, 'the untouched server kept its process');
  const newB = await pid('/servers/b/mcp');
  assert.match(newB, /^\d+$/);
  assert.notEqual(newB, pidB, 'the changed server restarted');
  const gone = request('tools/list');
  const removed = await post(`${gateway.url}/servers/d/mcp`, gone, headersFor(gone));
  assert.equal(removed.status, 404);
  assert.match(
    removed.body.error.message,
    /No server named 'd'. Endpoints: \/mcp, \/servers\/a\/mcp, \/servers\/b\/mcp, \/servers\/c\/mcp/,
  );
  // /mcp lists the new set, in config order.
  const list = request('tools/list');
  const tools: string[] = (await post(`${gateway.url}/mcp`, list, headersFor(list))).body.result.tools.map(
    (t: { name: string }) => t.name,
  );
  assert.ok(tools.some((t) => t.startsWith('c__')) && !tools.some((t) => t.startsWith('d__')), tools.join(','));
  assert.equal(await pid('/mcp c__pid'), await pid('/servers/c/mcp'));
});

test('a reload that cannot be applied changes nothing', async () => {
  const next = parseConfig(
    {
      listen: { port: 0 },
      servers: { a: servers.a, e: fixture('modern-server') },
      auth: { jwt: { issuer: 'https://idp.example', audience: 'gw', publicKeyFile: '/nonexistent/key.pem' } },
    },
    'test',
    ROOT,
  );
  await assert.rejects(gateway.reload(next), /publicKeyFile/);
  const call = request('tools/list');
  assert.equal((await post(`${gateway.url}/servers/e/mcp`, call, headersFor(call))).status, 404, 'e was not added');
  assert.equal((await post(`${gateway.url}/servers/b/mcp`, call, headersFor(call))).status, 200, 'b still serves');
});

test(
  'listen streams opened before a reload that changes servers are ended, so clients listen again under the new ' +
    'config',
  async () => {
    const listen = await openListen(`${gateway.url}/mcp`, { toolsListChanged: true });
    try {
      const next = parseConfig(
        {
          listen: { port: 0 },
          servers: { a: servers.a, b: { ...servers.b, timeoutMs: 20_000 }, c: fixture('modern-server') },
        },
        'test',
        ROOT,
      );
      await gateway.reload(next);
      await eventually(
        () => listen.messages.some((m) => m.id === listen.id && m.result?.resultType === 'complete'),
        5_000,
      );
    } finally {
      listen.close();
    }
  },
);
