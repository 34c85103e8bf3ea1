// Issue 36: a normal start with server-everything logs no warning. It asks for roots/list by itself right
// after initialize, with no call in flight: the gateway answers with the server's configured roots, or none,
// instead of refusing (and warning about) a question every such start asks.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { eventually, everything, headersFor, post, request, ROOT } from './harness.js';
import { recordingLog } from '../recording-log.js';

const ROOTS = [{ uri: 'file:///srv/notes', name: 'notes' }];
/** Every line, whatever its level, with the child bindings (server) it was logged under. */
const { log, lines } = recordingLog();
let gateway: RunningGateway;

before(async () => {
  const config = parseConfig(
    { listen: { port: 0 }, servers: { plain: everything, rooted: { ...everything, roots: ROOTS } } },
    'test',
    ROOT,
  );
  gateway = await startGateway(config, log);
});
after(() => gateway?.close());

const rootsAsked = (server: string) =>
  lines.some((line) => line.obj.server === server && line.obj.method === 'roots/list');

test(
  'server-everything starts without a warning: ' + 'its own roots/list is answered (configured roots, or none)',
  async () => {
    await eventually(
      () => ['plain', 'rooted'].every((name) => gateway.upstreams.get(name)!.status().state === 'ready'),
      20_000,
    );
    // The server asks 350 ms after initialize: wait until both have asked before calling, so no call is in
    // flight then (a question that comes during a call goes to that call's caller, not to the config).
    await eventually(() => rootsAsked('plain') && rootsAsked('rooted'), 20_000);
    for (const server of ['plain', 'rooted']) {
      const echo = request('tools/call', { name: 'echo', arguments: { message: 'hi' } });
      const answer = await post(`${gateway.url}/servers/${server}/mcp`, echo, headersFor(echo));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.match(JSON.stringify(answer.body.result?.content), /hi/);
    }

    // The configured roots reached the server: its get-roots-list shows what it was told at start.
    const list = request('tools/call', { name: 'get-roots-list', arguments: {} });
    const roots = await post(`${gateway.url}/servers/rooted/mcp`, list, headersFor(list));
    assert.match(JSON.stringify(roots.body.result?.content), /file:\/\/\/srv\/notes/, JSON.stringify(roots.body));

    const loud = lines.filter(
      (line) => (line.level === 'warn' || line.level === 'error') && /roots/i.test(JSON.stringify(line)),
    );
    assert.deepEqual(loud, []);
  },
);
